"""Issue 22 (1, 2, 6) in the real engine: a teammate's mistakes in per-frame calls print one clear
message per node and cause, naming the fix, and the NPC keeps working (tests/addon/mistakes_flood.gd)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.godot import run_check_script

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.godot
SELECTORS, BATCHED, FRAMES = 50, 10, 120


def _no_endpoint_env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("NPC_MIND_")}
    env["NPC_MIND_LLM_URL"] = ""
    env["NPC_MIND_START_LOCAL_MODEL"] = "0"
    return env


def test_a_typo_and_a_node_as_an_id_are_reported_once_per_node_and_the_npcs_keep_working() -> None:
    run, _ = run_check_script(
        ROOT, "res://tests/addon/mistakes_flood.gd", env=_no_endpoint_env(), allow_errors=True
    )
    output = run.stdout + run.stderr
    assert "Traceback" not in output, run.log
    assert "Cannot convert argument" not in output, run.log
    errors = run.errors()
    evaluate = [line for line in errors if "evaluate(): behavior 'eat', consideration 'hungr'" in line]
    warnings = [line for line in output.splitlines() if line.lstrip().startswith("WARNING:")]
    batched = [line for line in warnings if "the batched choice: behavior 'eat'" in line]
    decided = [line for line in errors if "request_decision(): the fallback_selector" in line]
    ignored = [line for line in errors if "an entity_id must be an int, got 'player'" in line]
    # one line per selector and cause, each naming its node and the fix
    assert sorted(line.split("npc_mind: ")[1].split(":")[0] for line in evaluate) == sorted(
        f"/root/Mob{i}" for i in range(SELECTORS)
    ), run.log
    assert sorted(line.split("npc_mind: ")[1].split(":")[0] for line in batched) == sorted(
        f"/root/Fed{i}" for i in range(BATCHED)
    ), run.log
    assert len(decided) == 1 and "/root/Thinker/Decision: " in decided[0], run.log
    assert len(ignored) == 1 and "/root/Memory: " in ignored[0], run.log
    for line in evaluate + batched:
        assert "(it gives 'hunger': a typo?)" in line, line
    for line in evaluate + batched + decided:
        assert "'hungr'" in line and "use_default_input" in line and "default_input" in line, line
        assert "reads as 0.0" in line, line
    assert "get_instance_id()" in ignored[0]
    # nothing else went wrong: at most these lines, a few per selector
    assert len(errors) == len(evaluate) + len(decided) + len(ignored), run.log
    node_as_id = [line for line in warnings if "an entity_id was given as /root/Player" in line]
    assert len(node_as_id) == 1 and "get_instance_id()" in node_as_id[0], run.log
    no_endpoint = [line for line in warnings if "no LLM endpoint is configured" in line]
    assert len(no_endpoint) == 1, run.log
    assert "npc_mind/llm/endpoint" in no_endpoint[0] and "NPC_MIND_LLM_URL" in no_endpoint[0]
    metrics = next(line["metrics"] for line in run.json_lines() if "metrics" in line)
    reported = SELECTORS + BATCHED + 1 + 2 + 1  # + the two entity_id causes + no_endpoint
    assert metrics["reported"] == reported, metrics
    # every later call was counted, not printed: each evaluate call (two a frame), each batched frame
    assert metrics["repeats"] >= SELECTORS * (2 * FRAMES - 1) + BATCHED * (FRAMES - 1), metrics
    assert len(output) < 200_000, len(output)  # was megabytes of tracebacks


def test_behaviors_that_are_not_behaviors_are_refused_and_a_string_input_is_said_once() -> None:
    run, _ = run_check_script(ROOT, "res://tests/addon/mistakes_refusals.gd", allow_errors=True)
    output = run.stdout + run.stderr
    assert "AttributeError" not in output, run.log
    refused = [line for line in run.errors() if "TypeError: " in line]
    assert len(refused) == 2, run.log
    assert "UtilitySelector.behaviors[1] must be a UtilityBehavior or null, got int (5)" in refused[0]
    assert "UtilityBehavior.considerations[1] must be a UtilityConsideration or null, got Node" in refused[1]
    (not_a_number,) = [line for line in run.errors() if "not a number; it reads as" in line]
    assert "consideration 'calm' reads input 'calm', which the context gives as 'high' (str)" in not_a_number
    assert "reads as 0.0" in not_a_number and "Fix: pass a number" in not_a_number
    batched = [line for line in run.errors() if "not a number; that value is ignored" in line]
    assert len(batched) == 2, run.log  # one per call kind, however often
    assert "set_input() got 'high' (str)" in batched[0]
    assert "set_inputs() got 'high' (str) for 'calm'" in batched[1]
    assert "Cannot convert argument" not in run.stdout + run.stderr, run.log
    assert len(run.errors()) == 5, run.log


def test_a_selector_with_no_behaviors_is_one_message_naming_it_until_it_gets_one() -> None:
    run, _ = run_check_script(ROOT, "res://tests/addon/mistakes_empty_selector.gd", allow_errors=True)
    assert "Traceback" not in run.stdout + run.stderr, run.log
    (said,) = run.errors()
    assert "Guard/Selector" in said and "needs at least one behavior" in said, said
    assert "Fix: correct its behaviors in the inspector" in said, said
