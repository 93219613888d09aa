"""The thread rule of npc_mind's stateful objects: each belongs to one thread, checked with one
comparison of thread ids on the calls that change it (no lock is taken anywhere)."""

from __future__ import annotations


class WrongThreadError(RuntimeError):
    """A call from a thread other than the one that owns the object (nothing was changed)."""
