"""`MemoryPool` is composed of named collaborators over one typed `PoolState`, not of mixins sharing
private attributes; and each `# type: ignore` of the type-checked packages says what it silences
and why (the checker itself runs in scripts/test, configured in python/pyproject.toml)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np

from npc_mind.memory import MemoryParams, MemoryPool
from npc_mind.memory.columns import ROW_COLUMNS, SLOT_COLUMNS
from npc_mind.memory.state import PoolState

PYTHON = Path(__file__).resolve().parent.parent / "python"
CHECKED = ("npc_mind", "npc_mind_godot", "gdbridge")  # gdbridge is not type-checked; its ignores say why too
IGNORE = re.compile(r"#\s*type:\s*ignore(?P<rest>.*)$")
EXPLAINED = re.compile(r"^\[[a-z-]+(, [a-z-]+)*\]  # \S")


def test_the_pool_is_no_mixin_and_its_collaborators_share_its_one_state() -> None:
    assert MemoryPool.__mro__ == (MemoryPool, object)
    pool = MemoryPool(4, MemoryParams(), events=True)
    collaborators = [pool._scalar, pool._recorder, pool._recaller]
    assert all(part.state is pool.state for part in collaborators)
    assert pool._recorder.scalar is pool._scalar and pool._recaller.scalar is pool._scalar
    # nothing but the state, the owner thread and the collaborators (and three per-call reads bound
    # straight to the scalar paths) lives on the pool itself
    parts = {"_owner", "state", "_scalar", "_recorder", "_recaller"}
    reads = {"writes_plainly", "room", "refresh"}
    assert set(vars(pool)) == parts | reads
    assert all(getattr(pool, name).__self__ is pool._scalar for name in reads)
    # a change through the public face is a change of the state's named columns
    npc = pool.add_npc()
    pool.record(npc, 7, 2, 0.25, 1.0)
    row = pool.row_of(npc)
    assert pool.state.entity[row, 0] == 7 and pool.state.memory_type[row, 0] == 2
    assert pool.state.salience[row, 0] == 0.25 and pool.state.last_access[row, 0] == 1.0
    assert pool.state.used_slots[row] == 1 and pool.state.clock == 1.0


def test_every_declared_column_is_a_typed_field_of_the_state_with_its_flat_view() -> None:
    fields = {field.name: field for field in dataclasses.fields(PoolState)}
    for column in SLOT_COLUMNS:
        assert column.name in fields and f"{column.name}_flat" in fields, column.name
    for column in ROW_COLUMNS:
        assert column.name in fields, column.name
    state = MemoryPool(3, reserve_npcs=5).state
    for column in SLOT_COLUMNS:
        grid, flat = getattr(state, column.name), getattr(state, f"{column.name}_flat")
        assert grid.shape == (5, 3) and grid.dtype == np.dtype(column.dtype)
        assert np.shares_memory(grid, flat) and flat.shape == (15,)
    for column in ROW_COLUMNS:
        assert getattr(state, column.name).shape == (5,)


def test_every_type_ignore_names_its_error_code_and_why() -> None:
    unexplained = []
    for package in CHECKED:
        for path in sorted((PYTHON / package).rglob("*.py")):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                found = IGNORE.search(line)
                if found and not EXPLAINED.match(found.group("rest")):
                    unexplained.append(f"{path.relative_to(PYTHON)}:{number}: {line.strip()}")
    assert not unexplained, "write `# type: ignore[code]  # why`:\n" + "\n".join(unexplained)
