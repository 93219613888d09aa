"""A game starts the bundled local model itself (the project setting `npc_mind/llm/start_local_model`,
here through its environment override) and stops it when it quits."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from npc_mind.llm.local_server import LAUNCHER, MODEL
from tests.support.godot import run_check_script

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [pytest.mark.godot, pytest.mark.llm]


def test_the_game_starts_the_local_model_uses_it_and_stops_it() -> None:
    if not (LAUNCHER.is_file() and MODEL.is_file()):
        pytest.skip("the local llama-server is not provisioned")
    env = {"NPC_MIND_START_LOCAL_MODEL": "1", "NPC_MIND_LLM_URL": ""}
    run, _ = run_check_script(ROOT, "res://tests/addon/local_model.gd", env=env, timeout=180)
    started = re.search(r"npc_mind: local model \S+ at (http://127\.0\.0\.1:\d+/v1)", run.log)
    assert started, run.log
    with pytest.raises(httpx.ConnectError):  # stopped with the game
        httpx.get(started.group(1).removesuffix("/v1") + "/health", timeout=2.0)


def test_a_missing_model_leaves_the_game_on_the_fallback_tiers(tmp_path: Path) -> None:
    env = {
        "NPC_MIND_START_LOCAL_MODEL": "1", "NPC_MIND_LLM_URL": "",
        "NPC_MIND_LLM_MODEL_FILE": str(tmp_path / "absent.gguf"),
    }  # fmt: skip
    from tests.support.godot import run_godot

    run = run_godot(ROOT, "-s", "res://tests/addon/local_model.gd", env=env, timeout=180)
    assert run.returncode == 0, run.log
    assert "the local model did not start" in run.log and "absent.gguf" in run.log
    checks = run.checks()
    assert checks["one decision signal"]["ok"], checks
    ended = [
        {key: value for key, value in row.items() if key != "ms"}
        for row in checks["one decision signal"]["detail"]
    ]
    assert ended == [{"fallback": "no_endpoint", "tier": 3}]
