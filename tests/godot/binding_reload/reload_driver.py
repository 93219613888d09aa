"""Drives tests/test_binding_reload.py inside the editor: a tool node that calls a Reloadable, has
reload_classes.py rewritten on disk, and calls the same object again once the editor reloaded it
(the module in place, then the library for the method and export version 2 adds)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import reload_classes

import gdbridge as gd
from gdbridge.classes import Node

SOURCE = Path(reload_classes.__file__)


def observe(driver: Node, target: Node) -> dict:
    """Through ClassDB (typed and Variant calls), from Python, and the engine's to_string; the
    method and export version 2 adds, once ClassDB has them (the library reload registers them)."""
    classdb = gd.singleton("ClassDB")
    return {
        "engine_call": target.call("answer", 10),
        "python_call": target.answer(10),
        "to_string": gd.utility.str(target),
        "level": target.level,
        "is_instance": isinstance(target, reload_classes.Reloadable),
        "mixin": target.call("greet"),
        "extra": target.call("extra") if classdb.class_has_method("Reloadable", "extra") else None,
        "bonus": target.get("bonus"),
        "same_object": driver.get_child(0) is target,
    }


class ReloadDriver(Node, tool=True):
    def __init__(self) -> None:
        self.frames = 0
        self.target = None
        self.started = 0.0
        self.before: dict = {}

    def _process(self, delta: float) -> None:
        self.frames += 1
        if self.frames == 5:
            self.target = reload_classes.Reloadable()
            self.target.level = 9
            self.add_child(self.target)
            self.before = observe(self, self.target)
            version_2 = os.environ.get("GDBRIDGE_RELOAD_SOURCE", "")
            SOURCE.write_text(Path(version_2).read_text())
            stamp = time.time() + 2
            os.utime(SOURCE, (stamp, stamp))  # a changed mtime, even within the same clock tick
            self.started = time.monotonic()
        elif self.frames > 5:
            after = observe(self, self.target)
            waited = time.monotonic() - self.started
            reloaded = after["engine_call"] != self.before["engine_call"] and after["extra"] is not None
            if reloaded or waited > 10:
                print(json.dumps({"before": self.before, "after": after, "waited": round(waited, 2)}))
                self.get_tree().quit()
