"""`scripts/demo`: play the market-square demo, with the project's own local model when it can start.

- With a display (DISPLAY set) the scene opens in a window: walk (WASD), steal (E), throw (Space, G).
- Without one (or with --headless) it plays the scripted scenario headless at a fixed frame rate, in
  real time (about two minutes; --fast: as fast as it goes), and prints the JSON-lines timeline and a
  summary; out/ gets timeline.jsonl and forgetting.png.
- The LLM: NPC_MIND_LLM_URL if set, else the provisioned llama-server (SmolLM2-135M, one thread),
  started here and stopped at the end. If the model cannot start the demo still plays: every decision
  then comes from the fallback tiers, and the stories hold all the same.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GODOT = ROOT / ".deps" / "godot" / "godot"


@contextlib.contextmanager
def llm_endpoint(enabled: bool) -> Iterator[str]:
    """The endpoint URL for the demo's guards, or "" (fallback tiers only)."""
    configured = os.environ.get("NPC_MIND_LLM_URL", "")
    if configured or not enabled:
        yield configured if enabled else ""
        return
    from npc_mind.llm.local_server import LocalLlamaServer, LocalServerError

    try:
        server = LocalLlamaServer(threads=1, parallel=2, log_path=ROOT / "out" / "llama-server.log").start()
    except (LocalServerError, OSError) as error:
        print(f"demo: the local model is unavailable ({error}); guards decide through the fallback tiers")
        yield ""
        return
    print(f"demo: local model (SmolLM2-135M via llama-server) at {server.base_url}")
    try:
        yield server.base_url
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/demo", description=__doc__.splitlines()[0])
    parser.add_argument("--headless", action="store_true", help="scripted scenario, even with a display")
    parser.add_argument("--no-llm", action="store_true", help="do not start the local model")
    parser.add_argument("--out", type=Path, default=ROOT / "out", help="where the timeline and plot go")
    parser.add_argument("--fps", type=int, default=30, help="fixed frame rate of the headless scenario")
    parser.add_argument(
        "--fast",
        action="store_true",
        help="headless as fast as it goes",
    )
    parser.add_argument(
        "--3d", dest="room3d", action="store_true", help="the 3D room instead (demo_scene/room3d; no model)"
    )
    args = parser.parse_args(argv)
    if args.room3d:
        return play_room3d(headless=args.headless or not os.environ.get("DISPLAY"))
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    windowed = bool(os.environ.get("DISPLAY")) and not args.headless
    with llm_endpoint(not args.no_llm) as endpoint:
        environment = {**os.environ, "NPC_MIND_LLM_URL": endpoint}
        if windowed:
            command = [str(GODOT), "--path", str(ROOT), "--", f"--out={out}"]
            return subprocess.run(command, env=environment, check=False).returncode
        # Real-time pacing by default, so a model's latency spans as much game time as in play
        # (the scene paces itself: --fixed-fps turns off the engine's own frame pacing).
        pacing = [] if args.fast else ["--realtime"]
        # --quit-after: the scenario quits by itself; this only stops a scene that failed to load.
        limit = ["--quit-after", str(200 * args.fps)]
        command = [str(GODOT), "--headless", "--fixed-fps", str(args.fps), *limit]
        command += ["--path", str(ROOT), "--", f"--out={out}", *pacing]
        timeline = (out / "timeline.jsonl").open("w")
        with subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, text=True) as game:
            assert game.stdout is not None
            for line in game.stdout:
                if line.startswith("{"):
                    timeline.write(line)
                    if '"event":"sample"' in line:
                        continue  # the per-second samples go to the file; the console gets the events
                sys.stdout.write(line)
            code = game.wait()
        timeline.close()
        print(f"demo: timeline in {out / 'timeline.jsonl'}, exit code {code}")
        return code


def play_room3d(headless: bool) -> int:
    """The 3D room: in a window, or headless with its story checked (one JSON line per check)."""
    scene = "res://demo_scene/room3d/room3d.tscn"
    if headless:
        command = [str(GODOT), "--headless", "--fixed-fps", "60", "--quit-after", "3600"]
        command += ["--path", str(ROOT), scene, "--", "--story"]
    else:
        command = [str(GODOT), "--path", str(ROOT), scene]
    return subprocess.run(command, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
