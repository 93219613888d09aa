"""`UpdateThread`: one worker thread that runs a server's batched update while the game's frame goes
on (the Godot front end's `update_on_thread`).

The owner thread hands it one job at a time (`start`: the rest of a step, `MindServer.begin_step`)
and takes its result at the next frame (`join`). Between the two the job owns the server: nothing
else may call it, so the front end makes every call from the owner thread wait first (`wait`, which
the binding calls before the main thread enters Python while the flag `on_busy` raised is up).
A job that raises is re-raised by `join`, on the owner thread; the worker goes on with the next.
"""

from __future__ import annotations

import _thread
import threading
from collections.abc import Callable
from typing import Any


class UpdateThread:
    """One daemon thread, started with it, waiting for jobs; `close` ends it."""

    def __init__(
        self,
        on_busy: Callable[[bool], None] | None = None,
        name: str = "npc_mind update",
        between: Callable[[], None] | None = None,
    ) -> None:
        """on_busy(True) is called (on the owner thread) as a job starts, on_busy(False) (on the
        worker) once it is done, before `join` or `wait` return. between() runs on the worker after
        each job, before it waits for the next (it must return once the owner thread starts one)."""
        self._on_busy = on_busy
        self._between = between
        self._job: Callable[[], Any] | None = None
        self._result: Any = None
        self._error: BaseException | None = None
        # Two bare locks, not Events: a hand-off is one C call each way, which matters once a frame.
        self._wake = _thread.allocate_lock()  # held while the worker has nothing to do
        self._wake.acquire()
        self._done = _thread.allocate_lock()  # held while a job runs (taken by start, freed by the worker)
        self._closing = False
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    @property
    def busy(self) -> bool:
        """A job runs (started, not yet done)."""
        return self._done.locked()

    @property
    def ident(self) -> int:
        """The worker's thread id."""
        return self._thread.ident or 0

    def start(self, job: Callable[[], Any]) -> None:
        """Run `job()` on the worker; refused while a job runs or after `close`."""
        if self.busy:
            raise RuntimeError("UpdateThread.start(): a job is running (join it first)")
        if self._closing:
            raise RuntimeError("UpdateThread.start(): the thread is closed")
        self._job, self._result, self._error = job, None, None
        self._done.acquire()
        if self._on_busy is not None:
            self._on_busy(True)
        self._wake.release()

    def wait(self) -> None:
        """Block until the running job is done (at once when none runs); its result stays for `join`."""
        self._wait_done()

    def join(self) -> Any:
        """The last job's result, once it is done (None when no job ran since the last join); an
        exception the job raised is raised here instead."""
        self._wait_done()
        result, error = self._result, self._error
        self._result = self._error = None
        if error is not None:
            raise error
        return result

    def close(self, timeout: float = 5.0) -> None:
        """Wait for the running job (up to `timeout` seconds) and end the worker; its result is dropped."""
        if self._closing:
            return
        self._closing = True
        self._wait_done(timeout)
        self._job = None
        if self._wake.locked():
            self._wake.release()
        self._thread.join(timeout)

    def _wait_done(self, timeout: float = -1) -> None:
        if self._done.acquire(timeout=timeout):
            self._done.release()

    def _serve(self) -> None:
        while True:
            self._wake.acquire()
            job = self._job
            if job is None:
                return  # closed
            try:
                self._result = job()
            except BaseException as error:  # handed to the owner thread by join()
                self._error = error
            finally:
                self._job = None
                if self._on_busy is not None:
                    self._on_busy(False)
                self._done.release()
            if self._between is not None and not self._closing:
                self._between()
