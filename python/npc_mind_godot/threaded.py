"""The server's batched update on a worker thread (`NpcMindServer.update_on_thread`).

Each frame the main thread takes the last update's signals (`join`), delivers them, runs the senses
and hands the rest of the step to the update thread (`start`), which runs it while the game's
physics, scripts and rendering go on. Until it is done it owns the server: the binding makes every
main-thread call into Python wait for it first, in C without the GIL (`objects.update_busy`), and
the calls it answers or queues in C without Python (MemoryStream.record_event) never wait. The C
answer tables (awareness_of, evaluate and get_choice answered without Python) are off meanwhile:
the update would rewrite them under the main thread's reads, so those calls run in Python, after
the wait.
"""

from __future__ import annotations

import time
from typing import Any

from gdbridge import objects
from npc_mind.server.core import MindServer
from npc_mind.server.events import ServerEvent
from npc_mind.server.frame_cache import FrameAnswers
from npc_mind.server.selectors import ChoiceAnswers
from npc_mind.server.update_thread import UpdateThread
from npc_mind_godot import _common


class ThreadedUpdate:
    """The update thread of one server, from `NpcMindServer.update_on_thread` on until `close`."""

    def __init__(self, mind: MindServer) -> None:
        self.mind = mind
        self.worker = UpdateThread(on_busy=objects.update_busy)
        self.waited = 0.0  # seconds Python waited for the update since `take_waited`
        self._parked: dict[tuple[int, str], tuple[Any, str, Any]] = {}  # the C tables, while off
        _common.UPDATE_THREAD[0] = self.worker.ident

    def wait(self) -> None:
        """Until the update under way is done."""
        if self.worker.busy:
            started = time.perf_counter()
            self.worker.wait()
            self.waited += time.perf_counter() - started

    def take_waited(self) -> float:
        """The main thread's seconds of waiting for the update since the last call: the binding's,
        before main-thread Python ran, and Python's own."""
        waited, self.waited = self.waited, 0.0
        return waited + objects.update_waited()

    def join(self) -> list[ServerEvent]:
        """The signals the last update owes, once it is done ([] when none ran). Its exception, if
        it raised, is raised here, on the main thread."""
        self.wait()
        return self.worker.join() or []

    def start(self, delta: float, time_scale: float, paused: bool, *, inputs_here: bool) -> None:
        """The step begun here (`MindServer.begin_step`) and its rest on the update thread."""
        rest = self.mind.begin_step(delta, time_scale, paused, inputs_here=inputs_here)
        self._park_answers()
        self.worker.start(rest)

    def close(self) -> list[ServerEvent]:
        """The last update's signals; the thread ends, the C answer tables are on again."""
        try:
            return self.join()
        finally:
            self.worker.close()
            _common.UPDATE_THREAD[0] = 0
            for owner, name, table in self._parked.values():
                setattr(owner, name, table)
            self._parked.clear()

    def _park_answers(self) -> None:
        """The C answer tables, off: emptied and set aside (a node that registers may put a new one
        in: parked again at the next frame). What the choice table answered with its check is read
        back first (`SelectorBank.settle_answers`)."""
        selectors, cache = self.mind.selectors, self.mind.memory.cache
        if selectors.answers.wanted:
            selectors.settle_answers()
        for owner, name, idle in (
            (selectors, "answers", ChoiceAnswers),
            (selectors, "batch_answers", ChoiceAnswers),
            (cache, "answers", FrameAnswers),
        ):
            table = getattr(owner, name)
            if table.wanted:
                table.clear()
                setattr(owner, name, idle())
                self._parked.setdefault((id(owner), name), (owner, name, table))
