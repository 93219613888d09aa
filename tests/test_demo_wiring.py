"""The market demo is wired, not scripted: its scripts make no direct mind call (the guards' senses,
sourced inputs and actions do what guard.gd did by hand)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The mind calls a designer's wiring replaces: writing or waking memory, choosing, targeting, asking.
# Reads that change nothing (get_memories for the bars, get_sourced_inputs, is_pending) and the
# game's own stimuli (NpcMindServer.emit_stimulus) are not among them.
MIND_CALLS = (
    "record_event", "record_batch", "note_sighting", "query_strongest", "awareness_of", "awareness_batch",
    "evaluate", "set_input", "set_inputs", "set_target", "set_blackboard_value", "request_decision",
    "abort", "advance", "load_state",
)  # fmt: skip


def mind_calls_in(source: str) -> list[str]:
    lines = (line.split("#", 1)[0] for line in source.splitlines())  # comments name calls freely
    code = "\n".join(lines)
    return [name for name in MIND_CALLS if re.search(rf"\.{name}\s*\(", code)]


def test_the_demo_scripts_make_no_direct_mind_call() -> None:
    scripts = sorted((ROOT / "demo_scene").glob("*.gd"))
    assert {path.name for path in scripts} >= {"guard.gd", "market.gd", "person.gd"}
    found = {path.name: mind_calls_in(path.read_text()) for path in scripts}
    assert not any(found.values()), found
    # the scan sees a call where there is one
    assert mind_calls_in("\tmemory.record_event(id, MemoryStream.HOSTILE, 0.9)\n\tdecision.abort()") == [
        "record_event",
        "abort",
    ]
