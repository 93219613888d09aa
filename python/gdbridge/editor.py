"""Editor-only start-up (EDITOR initialization level): class documentation for the help pages."""

from __future__ import annotations

from gdbridge import docs


def start() -> None:
    docs.load_into_editor()
