"""The server's one per-frame hook: the engine main loop's own frame callback.

It runs after every node's `_process` (as the old ticker node with the last process priority did),
and no node carries it: game code that frees or removes root's children (a level change written as
`for child in root.get_children(): child.free()`) cannot stop the clock, forgetting or any signal.
"""

from __future__ import annotations

from collections.abc import Callable

from gdbridge import objects


def start(frame: Callable[[], None]) -> None:
    """Call `frame()` once per engine frame from now on, for as long as the process runs."""
    if not objects.add_frame_hook(frame):
        raise RuntimeError("this engine has no main-loop frame callbacks (npc_mind needs Godot 4.6+)")
