"""The main job's scenario (examples/memory_timeline.py) runs headless and tells the stories."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]


def load_example():
    spec = importlib.util.spec_from_file_location("memory_timeline", ROOT / "examples" / "memory_timeline.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_timeline_tells_the_stories_and_plots_the_curves(tmp_path, capsys) -> None:
    demo = load_example()
    assert demo.main(["--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    for phrase in (
        "sees the thief snatch a purse",
        "S still 840 s, k 1 (refractory period)",
        "forgets a thrown stone",
        "memory full: evicts",
        "90 s later       R 0.90 -> PURSUE",
        "sees him steal again (rehearsal)",
        "identical answers",
    ):
        assert phrase in text, phrase
    assert "FAILED" not in text
    assert text.count("[ok]") == 7
    assert "evicts the grenade" not in text
    png = tmp_path / "memory_timeline.png"
    with Image.open(png) as img:
        assert img.format == "PNG" and img.size[0] > 1000 and img.size[1] > 400


def test_timeline_holds_under_the_power_curve(tmp_path, capsys) -> None:
    demo = load_example()
    assert demo.main(["--out", str(tmp_path), "--curve", "power"]) == 0
    text = capsys.readouterr().out
    assert "the theft is still remembered 90 s later" in text and "FAILED" not in text
