"""Generated functions' sources where tracebacks and debuggers look for them: `compile_function`
compiles a source under a fake filename naming what it is (``<npc_mind.utility pick: attack|flee>``)
and registers the text with `linecache` for as long as the function lives. Used by the generator
(`codegen.py`) and by the float forms of `rules.py`'s primitives."""

from __future__ import annotations

import itertools
import linecache
import weakref
from collections.abc import Callable, Iterable
from typing import Any

_FILENAME_PREFIX = "<npc_mind.utility "
_sources: dict[str, str] = {}  # filename -> source, for the live generated functions
_live: dict[str, int] = {}  # filename -> how many live functions run that source
_serial = itertools.count(2)


def compile_function(source: str, namespace: dict[str, Any], name: str, label: str) -> Callable[..., Any]:
    """The function `name` that `source` defines, run in `namespace`. `label` says what the code
    is (``"pick: attack|flee"``); it names the fake file that tracebacks and debuggers read the
    source from (one more serial number when a different source already holds that name)."""
    filename = _filename(label, source)
    exec(compile(source, filename, "exec"), namespace)
    function = namespace[name]
    function.source = source
    _sources[filename] = source
    _live[filename] = _live.get(filename, 0) + 1
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    weakref.finalize(function, _forget, filename, source)
    return function


def _filename(label: str, source: str) -> str:
    base = f"{_FILENAME_PREFIX}{label}"
    filename = f"{base}>"
    while _sources.get(filename, source) != source:
        filename = f"{base} #{next(_serial)}>"
    return filename


def _forget(filename: str, source: str) -> None:
    """Drop a dead function's source once no live function runs it."""
    if _sources.get(filename) != source:
        return
    _live[filename] -= 1
    if not _live[filename]:
        del _sources[filename], _live[filename]
        linecache.cache.pop(filename, None)


def restore_sources() -> None:
    """Put the live generated sources back into `linecache` (after `linecache.clearcache()`)."""
    for filename, source in _sources.items():
        linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)


def label_of(names: Iterable[str], limit: int = 60) -> str:
    """Names joined for a label, shortened past `limit` characters."""
    text = "|".join(names)
    return text if len(text) <= limit else f"{text[: limit - 3]}..."
