"""Crafted save files (issue 10, defect 9, and the save items of defect 11): every header field is
bounded before anything is allocated, every malformed input raises `SaveFormatError` (never
`MemoryError`, `ValueError`, `OverflowError` or `RecursionError`), `import_npc` changes nothing
unless the whole file is valid, and concurrent saves to one path never collide."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from npc_mind.memory import MemoryPool, MemoryType, SaveFormatError, persistence
from tests.test_memory_bad_input import rewrite, snapshot


def sample_pool() -> MemoryPool:
    pool = MemoryPool(4)
    a, b = pool.add_npc(), pool.add_npc()
    pool.record(a, 1, MemoryType.HOSTILE, 0.9, 0.0)
    pool.record(a, 2, MemoryType.TRIVIA, 0.4, 0.0, tags=["stall"])
    pool.record(b, 3, MemoryType.OBSERVATION, 0.2, 0.0)
    pool.link(a, 1, 2)
    return pool


def split(data: bytes, kind: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    header, arrays = persistence.parse(data, kind)
    header.pop("params_obj")
    header.pop("arrays")
    return header, arrays


def craft(data: bytes, kind: int, edit: Callable[[dict[str, Any], dict[str, np.ndarray]], None]) -> bytes:
    """A well-formed file (magic, version, checksum all right) whose contents `edit` changed."""
    header, arrays = split(data, kind)
    edit(header, arrays)
    return persistence._pack(kind, header, arrays)


def json_edit(data: bytes, edit: Callable[[bytes], bytes]) -> bytes:
    return rewrite(data, header_edit=edit)


POOL, NPC = persistence.KIND_POOL, persistence.KIND_NPC


def set_field(name: str, value: Any) -> Callable[[dict[str, Any], dict[str, np.ndarray]], None]:
    def edit(header: dict[str, Any], _arrays: dict[str, np.ndarray]) -> None:
        header[name] = value

    return edit


def set_array(name: str, value: Any) -> Callable[[dict[str, Any], dict[str, np.ndarray]], None]:
    def edit(_header: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        arrays[name] = np.full(arrays[name].shape, value, dtype=arrays[name].dtype)

    return edit


def test_a_small_file_cannot_make_the_loader_allocate_a_gigabyte(tmp_path: Path) -> None:
    pool = sample_pool()
    path = tmp_path / "pool.npcmem"
    pool.save(path, now=1.0)
    good = path.read_bytes()
    claims = {
        "next id 2^27 (a 1 GiB id table)": craft(good, POOL, set_field("next_id", 2**27)),
        "next id 2^40": craft(good, POOL, set_field("next_id", 2**40)),
        "next id 2^63 - 1": craft(good, POOL, set_field("next_id", 2**63 - 1)),
        "capacity 65535 x 2,000 npcs": craft(
            good,
            POOL,
            lambda h, a: h.update(capacity=65_535, npc_ids=list(range(2000)), next_id=2000),
        ),
    }
    for what, data in claims.items():
        assert len(data) < 12_000, what
        path.write_bytes(data)
        tracemalloc.start()
        try:
            with pytest.raises(SaveFormatError, match="max_bytes"):
                MemoryPool.load(path, now=0.0)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 8 * 2**20, (what, peak)
    # a trusted big file loads with a larger bound
    path.write_bytes(claims["next id 2^27 (a 1 GiB id table)"])
    with pytest.raises(SaveFormatError, match="max_bytes"):
        MemoryPool.load(path, now=0.0, max_bytes=2**20)
    path.write_bytes(good)
    assert MemoryPool.load(path, now=0.0, max_bytes=2**20).memory_count() == pool.memory_count()


@pytest.mark.parametrize(
    ("what", "edit"),
    [
        ("a huge npc id", set_field("npc_ids", [0, 2**70])),
        ("a bool capacity", set_field("capacity", True)),
        ("a float next id", set_field("next_id", 5.0)),
        ("params not an object", set_field("params", [1, 2])),
        ("an alpha too big for a float", lambda h, a: h["params"].update(alpha=10**400)),
        ("a link to a huge entity", set_field("links", [[0, 1, None, 2**64, None]])),
        ("a link with a float type", set_field("links", [[0, 1, 1.5, 2, None]])),
        ("a link of a memory to itself", set_field("links", [[0, 1, 3, 1, 3]])),
        ("a link that is not a list", set_field("links", [{"a": 1}])),
        ("a link of a float npc index", set_field("links", [[0.0, 1, None, 2, None]])),
        ("tags as a string", set_field("tags", [[0, "stall"]])),
        ("tags of a float index", set_field("tags", [[0.0, ["stall"]]])),
        ("negative ages", set_array("w_age", -50.0)),
        ("a recall count of 2^63 - 1", set_array("w_recalls", 2**63 - 1)),
    ],
)
def test_malformed_contents_raise_save_format_error_and_change_nothing(what: str, edit: Any) -> None:
    pool = sample_pool()
    whole = craft(persistence.dump_pool(pool, 1.0), POOL, edit)
    one = craft(pool.export_npc(0, now=1.0), NPC, edit)
    before = snapshot(pool)
    with pytest.raises(SaveFormatError):
        persistence.load_pool(MemoryPool, whole, 0.0)
    with pytest.raises(SaveFormatError):
        pool.import_npc(0, one, now=2.0)
    assert snapshot(pool) == before, what


@pytest.mark.parametrize(
    ("what", "header_edit"),
    [
        (
            "deep nesting",
            lambda h: h.replace(b'"links":', b'"deep":' + b"[" * 100_000 + b"]" * 100_000 + b',"links":'),
        ),
        ("a 5,000-digit number", lambda h: h.replace(b'"capacity":4', b'"capacity":' + b"9" * 5000)),
        ("not UTF-8", lambda h: h.replace(b'"capacity"', b'"capa\xffity"')),
        ("a header that is a list", lambda h: b"[1, 2, 3]"),
        ("an array directory of numbers", lambda h: h.replace(b'"arrays":[', b'"arrays":[1,')),
    ],
)
def test_malformed_json_raises_save_format_error(what: str, header_edit: Any) -> None:
    pool = sample_pool()
    before = snapshot(pool)
    for data, load in (
        (persistence.dump_pool(pool, 1.0), lambda d: persistence.load_pool(MemoryPool, d, 0.0)),
        (pool.export_npc(0, now=1.0), lambda d: pool.import_npc(0, d, now=2.0)),
    ):
        with pytest.raises(SaveFormatError):
            load(json_edit(data, header_edit))
    assert snapshot(pool) == before, what


def test_an_import_with_a_bad_link_changes_nothing() -> None:
    """The docs promise nothing changes on a bad file: the links used to be written after the NPC's
    memories were replaced, so a bad one failed half-way."""
    pool = sample_pool()
    other = sample_pool()
    other.record(0, 9, MemoryType.TRAUMA, 1.0, 0.5)
    bad = craft(other.export_npc(0, now=1.0), NPC, set_field("links", [[0, 1, None, 2**64, None]]))
    before = snapshot(pool)
    with pytest.raises(SaveFormatError, match="link"):
        pool.import_npc(0, bad, now=2.0)
    assert snapshot(pool) == before
    assert [view.entity for view in pool.memories(0, 2.0)] == [1, 2]


def test_a_save_before_a_memorys_last_access_stores_age_zero() -> None:
    """A clock that went backwards: ages are written as 0 (elapsed time is clamped to 0 in the pool
    too), never negative (a negative age made a memory that was never forgotten)."""
    pool = sample_pool()
    pool.record(0, 5, MemoryType.TRIVIA, 0.0, 100.0)
    _, arrays = split(pool.export_npc(0, now=10.0), NPC)
    assert (arrays["w_age"] >= 0).all()
    assert arrays["w_age"].tolist() == [10.0, 10.0, 0.0]
    fresh = MemoryPool(4)
    npc = fresh.add_npc()
    fresh.import_npc(npc, pool.export_npc(0, now=10.0), now=0.0)
    # trivia at salience 0: S = 2.5 s, forgotten at 2.5 ln 20 = 7.5 s after the load
    assert fresh.awareness(npc, 5, 7.0) > 0
    assert fresh.awareness(npc, 5, 8.0) == 0


def test_recall_counts_near_the_bound_neither_overflow_nor_allocate() -> None:
    """A recall count of 2^63 - 1 overflowed on every recall; a huge one grew the scalar path's
    ln(1 + k) table to its size. Counts up to 2^53 load; the rehearsal's factor has the batch's bits."""
    pool = sample_pool()
    k = 2**53 - 2
    data = craft(pool.export_npc(1, now=1.0), NPC, set_array("w_recalls", k))  # npc 1: no links
    single, batch = MemoryPool(4), MemoryPool(4)
    for target in (single, batch):
        target.add_npc()
        target.import_npc(0, data, now=0.0)
    tracemalloc.start()
    try:
        single.record(0, 3, int(MemoryType.OBSERVATION), 0.9, 10.0)  # plain ints: the scalar path
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2**20
    batch.record_batch([0], [3], [MemoryType.OBSERVATION], [0.9], 10.0)
    assert single.memories(0, 10.0) == batch.memories(0, 10.0)
    view = single.memories(0, 10.0)[0]
    assert view.recall_count == k + 1 and np.isfinite(view.stability) and view.stability > 0


def test_concurrent_saves_to_one_path_never_collide(tmp_path: Path) -> None:
    """They shared one `.tmp` name: one thread's rename took another's file away."""
    pools = [sample_pool() for _ in range(4)]
    for i, pool in enumerate(pools):
        pool.record(0, 100 + i, MemoryType.TRIVIA, 0.5, 0.5)
    path = tmp_path / "shared.npcmem"
    errors: list[BaseException] = []
    start = threading.Barrier(len(pools))

    def save_many(pool: MemoryPool) -> None:
        start.wait()
        for _ in range(40):
            try:
                pool.save(path, now=1.0)
            except BaseException as error:  # collected for the assertion
                errors.append(error)

    threads = [threading.Thread(target=save_many, args=(pool,)) for pool in pools]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shared.npcmem"]  # no temporary file left
    loaded = MemoryPool.load(path, now=1.0)
    assert any(loaded.memory_count() == pool.memory_count() for pool in pools)


# A child process that saves a pool to argv[1] and stops inside the write (at its fsync, the
# data written), saying so: the parent kills it there, as a player's crash or kill -9 would.
_SAVE_THEN_HANG = """
import os, sys, time
from npc_mind.memory import MemoryPool, MemoryType

def hang(fd):
    print("writing", flush=True)
    time.sleep(60)

pool = MemoryPool(4)
pool.record(pool.add_npc(), 7, MemoryType.HOSTILE, 0.9, 0.0)
os.fsync = hang
pool.save(sys.argv[1], now=1.0)
"""


def test_saves_killed_mid_write_leave_at_most_one_temporary_file(tmp_path: Path) -> None:
    """Issue 22 (12): each killed save left its own unique `.tmp` file, and they accumulated."""
    path = tmp_path / "world.npcmem"
    sample_pool().save(path, now=1.0)
    before = path.read_bytes()
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root / "python")}
    for _ in range(3):
        child = subprocess.Popen(
            [sys.executable, "-c", _SAVE_THEN_HANG, str(path)], stdout=subprocess.PIPE, env=env, text=True
        )
        try:
            assert child.stdout is not None and child.stdout.readline() == "writing\n"
        finally:
            child.kill()
            child.communicate()
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == [".world.npcmem.tmp", "world.npcmem"]  # one temporary file, whatever the kills
    assert path.read_bytes() == before  # the previous save is whole
    sample_pool().save(path, now=1.0)  # the next save takes the killed one's file over
    assert sorted(p.name for p in tmp_path.iterdir()) == ["world.npcmem"]
    assert MemoryPool.load(path, now=1.0).memory_count() == 3


def test_a_save_is_fsynced_before_it_replaces_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Records (and still runs) os.fsync and the rename: the data is on disk before it takes the name."""
    calls: list[str] = []
    real_fsync, real_replace = os.fsync, Path.replace

    def fsync(fd: int) -> None:
        calls.append("fsync")
        real_fsync(fd)

    def replace(self: Path, target: Any) -> Path:
        calls.append("replace")
        return real_replace(self, target)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(Path, "replace", replace)
    sample_pool().save(tmp_path / "p.npcmem", now=1.0)
    assert calls[:2] == ["fsync", "replace"]
    if os.name == "posix":  # the save has the default mode, not an owner-only temporary file's
        assert (tmp_path / "p.npcmem").stat().st_mode & 0o777 == 0o644
