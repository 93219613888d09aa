"""Sightings: where and when each memory stream last perceived each entity, on the server's clock;
bounded per stream, dropped with the stream, refused for a bad position or an unknown stream."""

from __future__ import annotations

import math

import pytest

from npc_mind.server.core import MindServer
from npc_mind.server.sightings import MAX_SIGHTINGS_PER_STREAM, Sightings

THIEF = 2**40 + 7  # Godot instance ids exceed 2^32


def test_the_newest_sighting_wins_and_time_since_runs_on_the_server_clock() -> None:
    mind = MindServer("manual")
    guard = mind.add_memory()
    mind.note_sighting(guard, THIEF, (10.0, 4.0))
    mind.advance(2.5)
    assert mind.sightings.seconds_since(guard, THIEF, mind.now()) == 2.5
    mind.note_sighting(guard, THIEF, (12.0, 5.0, -1.0))
    mind.advance(1.0)
    sighting = mind.sightings.get(guard, THIEF)
    assert sighting is not None and sighting.position == (12.0, 5.0, -1.0) and sighting.seen_at == 2.5
    assert mind.sightings.seconds_since(guard, THIEF, mind.now()) == 1.0
    assert mind.sightings.seconds_since(guard, 12345, mind.now()) == math.inf
    assert mind.metrics()["memory/sightings"] == 1.0


def test_sightings_belong_to_their_stream_and_go_with_it() -> None:
    mind = MindServer("manual")
    aldric, bertha = mind.add_memory(), mind.add_memory()
    mind.note_sighting(aldric, THIEF, (1.0, 2.0))
    assert mind.sightings.get(bertha, THIEF) is None
    mind.remove(aldric)
    assert mind.sightings.get(aldric, THIEF) is None and len(mind.sightings) == 0


def test_a_stream_keeps_its_most_recent_entities() -> None:
    sightings = Sightings()
    for entity in range(MAX_SIGHTINGS_PER_STREAM + 10):
        sightings.note(1, entity, (float(entity), 0.0), now=float(entity))
    sightings.note(1, 20, (0.0, 0.0), now=999.0)  # seen again: the most recent
    kept = sightings.entities(1)
    assert len(kept) == MAX_SIGHTINGS_PER_STREAM and kept[-1] == 20
    assert sightings.get(1, 0) is None and sightings.get(1, 10) is not None


@pytest.mark.parametrize("position", [(1.0,), (1.0, 2.0, 3.0, 4.0), (math.nan, 0.0), (0.0, math.inf)])
def test_a_bad_position_is_refused_and_changes_nothing(position: tuple[float, ...]) -> None:
    mind = MindServer("manual")
    guard = mind.add_memory()
    mind.note_sighting(guard, THIEF, (1.0, 1.0))
    with pytest.raises(ValueError, match="2 or 3 finite numbers"):
        mind.note_sighting(guard, THIEF, position)
    sighting = mind.sightings.get(guard, THIEF)
    assert sighting is not None and sighting.position == (1.0, 1.0)


def test_an_unknown_stream_is_refused() -> None:
    mind = MindServer("manual")
    selector = mind.add_selector(
        {"behaviors": [{"name": "idle", "considerations": [{"input_key": "calm", "curve_type": "linear"}]}]}
    )
    with pytest.raises(KeyError, match="no memory stream"):
        mind.note_sighting(selector, THIEF, (0.0, 0.0))
    with pytest.raises(KeyError, match="no memory stream"):
        mind.note_sighting(424242, THIEF, (0.0, 0.0))
