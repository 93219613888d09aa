"""The server's batched update on a worker thread (`NpcMindServer.update_on_thread`).

Each frame the main thread takes the last update's signals (`join`), delivers them, runs the senses
and hands the rest of the step to the update thread (`start`), which runs it while the game's
physics, scripts and rendering go on. Until it is done it owns the server: the binding makes every
main-thread call into Python wait for it first, in C without the GIL (`objects.update_busy`), and
the calls it answers or queues in C without Python (MemoryStream.record_event) never wait. The C
answer tables (awareness_of, evaluate and get_choice answered without Python) are off meanwhile:
the update would rewrite them under the main thread's reads, so those calls run in Python, after
the wait.

An update that finds the next frame needs nothing of the main thread's Python
(`NpcMindServer._frame_apart`) arms the binding with its signals instead of returning them: the
next frame callback emits them in C, reads the frame's values and hands the whole frame to this
thread (`_frames`), which runs the front end's frame logic and the next update here, without the
main thread entering Python.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from gdbridge import objects
from gdbridge.objects import HandedFrame
from npc_mind.server.core import MindServer
from npc_mind.server.events import ServerEvent
from npc_mind.server.frame_cache import FrameAnswers
from npc_mind.server.selectors import ChoiceAnswers
from npc_mind.server.update_thread import UpdateThread
from npc_mind_godot import _common


class ThreadedUpdate:
    """The update thread of one server, from `NpcMindServer.update_on_thread` on until `close`."""

    def __init__(
        self,
        mind: MindServer,
        arm: Callable[[list[ServerEvent]], bool],
        run_frame: Callable[[HandedFrame], list[ServerEvent]],
    ) -> None:
        """arm(events), on this thread at an update's end: True when the binding was armed with the
        events' signals (the next frame runs here); run_frame(handed), here: that frame's logic and
        update, returning the update's events."""
        self.mind = mind
        self._arm = arm
        self._run_frame = run_frame
        self.worker = UpdateThread(on_busy=objects.update_busy, between=self._frames)
        self.waited = 0.0  # seconds Python waited for the update since `take_waited`
        self._parked: dict[tuple[int, str], tuple[Any, str, Any]] = {}  # the C tables, while off
        # what the frames run here owe the main thread: the last one's events when it did not arm,
        # and an exception one raised (raised by `join`, on the main thread)
        self._owed: list[ServerEvent] = []
        self._error: BaseException | None = None
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
        """The signals the last update owes, once it is done ([] when none ran, or when it armed).
        Its exception, if it raised, is raised here, on the main thread."""
        self.wait()
        events = self.worker.join() or []
        owed, self._owed = self._owed, []
        error, self._error = self._error, None
        if error is not None:
            raise error
        return events + owed

    def start(self, delta: float, time_scale: float, paused: bool, *, inputs_here: bool) -> None:
        """The step begun here (`MindServer.begin_step`) and its rest on the update thread."""
        rest = self.mind.begin_step(delta, time_scale, paused, inputs_here=inputs_here)
        self._park_answers()
        self.worker.start(lambda: self._armed_or(rest()))

    def _armed_or(self, events: list[ServerEvent]) -> list[ServerEvent]:
        """An update's events for the main thread, or [] when the binding was armed with them."""
        return [] if self._arm(events) else events

    def _frames(self) -> None:
        """On the update thread after an update: each frame the binding hands it (an update that
        armed), run whole, until one does not arm or main-thread Python runs (`frame_wait`: None)."""
        while (handed := objects.frame_wait()) is not None:
            try:
                self._owed += self._armed_or(self._run_frame(handed))
            except BaseException as error:  # handed to the main thread by join()
                self._error = error
            finally:
                objects.update_busy(False)

    def close(self) -> list[ServerEvent]:
        """The last update's signals; the thread ends, the C answer tables are on again."""
        objects.frame_disarm()  # the thread may wait for a frame (an update armed since the last door)
        try:
            return self.join()
        finally:
            self.worker.close()
            _common.UPDATE_THREAD[0] = 0
            for owner, name, table in self._parked.values():
                setattr(owner, name, table)
            self._parked.clear()

    def answers_wanted(self) -> bool:
        """A C answer table is in use (one a node put in since the last park)."""
        return any(getattr(owner, name).wanted for owner, name, _idle in self._answer_tables())

    def _answer_tables(self) -> tuple[tuple[Any, str, type], ...]:
        """The C answer tables: (owner, attribute, the idle table that stands in while parked)."""
        selectors, cache = self.mind.selectors, self.mind.memory.cache
        return (
            (selectors, "answers", ChoiceAnswers),
            (selectors, "batch_answers", ChoiceAnswers),
            (cache, "answers", FrameAnswers),
        )

    def _park_answers(self) -> None:
        """The C answer tables, off: emptied and set aside (a node that registers may put a new one
        in: parked again at the next frame). What the choice table answered with its check is read
        back first (`SelectorBank.settle_answers`)."""
        selectors = self.mind.selectors
        if selectors.answers.wanted:
            selectors.settle_answers()
        for owner, name, idle in self._answer_tables():
            table = getattr(owner, name)
            if table.wanted:
                table.clear()
                setattr(owner, name, idle())
                self._parked.setdefault((id(owner), name), (owner, name, table))
