"""The senses' Godot-free rules (`npc_mind.senses`): the field of view, the hearing attenuation, the
phase spread, memory type names, the per-target rate gate."""

from __future__ import annotations

import math

import numpy as np
import pytest

from npc_mind.memory import MemoryType
from npc_mind.senses import (
    MAX_RATE_KEYS,
    RateGate,
    cos_half_fov,
    heard_salience,
    in_view,
    memory_type_of,
    phase,
)


def view(targets: list[tuple[float, float]], fov: float, reach: float = 10.0) -> list[bool]:
    eyes = np.zeros((1, 2))
    facing = np.array([[1.0, 0.0]])
    seen = in_view(eyes, facing, np.array([reach]), np.array([cos_half_fov(fov)]), np.asarray(targets, float))
    return seen[0].tolist()


def test_the_field_of_view_is_a_wedge_centred_on_the_facing() -> None:
    ahead, side, behind = (5, 0), (0, 5), (-5, 0)
    edge_in, edge_out = (5, 4.9), (5, 5.1)  # either side of 45 degrees
    assert view([ahead, side, behind, edge_in, edge_out], 90.0) == [True, False, False, True, False]
    assert view([ahead, side, behind], 180.0) == [True, True, False]
    assert view([ahead, side, behind, (-1, 5), (-5, 1)], 270.0) == [True, True, False, True, False]
    assert view([ahead, side, behind], 360.0) == [True, True, True]
    assert view([(10, 0), (10.01, 0)], 90.0) == [True, False]  # the range is inclusive
    assert view([(0, 0)], 10.0) == [True]  # at the eyes


def test_in_view_batches_many_senses_against_many_targets_in_3d() -> None:
    eyes = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    facing = np.array([[0.0, 0.0, -1.0], [0.0, 0.0, 1.0]])
    targets = np.array([[0.0, 0.0, -5.0], [0.0, 0.0, 5.0], [0.0, 5.0, -0.1]])
    cos = np.array([cos_half_fov(90.0)] * 2)
    assert in_view(eyes, facing, np.array([10.0, 10.0]), cos, targets).tolist() == [
        [True, False, False],
        [False, True, False],
    ]


def test_hearing_is_linear_to_the_edge_and_a_factor_per_occluder() -> None:
    assert heard_salience(0.8, 100.0, 400.0) == pytest.approx(0.6)
    assert heard_salience(0.8, 300.0, 400.0, 1, 0.5) == pytest.approx(0.1)
    assert heard_salience(0.8, 300.0, 400.0, 2, 0.5) == pytest.approx(0.05)
    assert heard_salience(0.8, 0.0, 400.0) == pytest.approx(0.8)
    assert heard_salience(0.8, 400.0, 400.0) == 0.0
    assert heard_salience(0.8, 500.0, 400.0) == 0.0
    assert heard_salience(0.8, 0.0, 0.0) == 0.0


def test_phases_spread_many_senses_over_the_frames_of_a_period() -> None:
    period, frames = 0.1, 6  # 10 Hz at 60 fps
    slots = np.floor(np.array([phase(i, period) for i in range(200)]) / (period / frames)).astype(int)
    counts = np.bincount(slots, minlength=frames)
    assert counts.sum() == 200 and counts.max() <= math.ceil(200 / frames) + 2, counts
    assert all(0.0 <= phase(i, period) < period for i in range(1000))


def test_memory_types_by_code_or_name() -> None:
    assert (
        memory_type_of(3)
        == memory_type_of("hostile")
        == memory_type_of(" HOSTILE ")
        == int(MemoryType.HOSTILE)
    )
    for bad in (5, -1, "loud", True, 1.0, None):
        with pytest.raises(ValueError, match="a memory type is"):
            memory_type_of(bad)  # type: ignore[arg-type]


def test_the_rate_gate_lets_one_pass_per_interval_and_stays_bounded() -> None:
    gate = RateGate()
    assert gate.passes("a", 0.0, 1.0)
    assert not gate.passes("a", 0.5, 1.0)
    assert gate.passes("b", 0.5, 1.0)  # per key
    assert gate.passes("a", 1.0, 1.0)
    assert gate.passes("a", 1.0, 0.0) and gate.passes("a", 1.0, 0.0)  # interval 0: every time
    for key in range(MAX_RATE_KEYS * 3):
        gate.passes(key, 100.0 + key, 1.0)
    assert len(gate) <= MAX_RATE_KEYS + 1
