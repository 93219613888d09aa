"""Class reference XML for the editor's help, built from docstrings.

Docstrings are written as Markdown-ish plain text (wrapped lines, a blank line between paragraphs,
`code` in backticks, "- " list items). The editor's help renders Godot's class-reference markup, in
which each line of a description is a paragraph and code and links are BBCode tags, so `bbcode()`
converts one into the other.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable
from xml.sax.saxutils import escape

from gdbridge import classdb, interface
from gdbridge.declare import Export, Signal
from gdbridge.types import VariantType

T = VariantType

_LIST_ITEM = re.compile(r"^(?:[-*+]|\d+[.)])\s+")
_INLINE = re.compile(r"`([^`]+)`|\*\*([^*]+)\*\*")
_CAMEL_WORD = re.compile(r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b")  # e.g. MemoryStream, not "Node"


def paragraphs(text: str) -> list[str]:
    """A docstring's paragraphs: wrapped lines joined by a space, a blank line ending a paragraph,
    each list item its own paragraph (its wrapped continuation lines joined to it)."""
    result: list[str] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            result.append(" ".join(current))
            current.clear()

    for line in inspect.cleandoc(text or "").splitlines():
        stripped = line.strip()
        if not stripped:
            flush()
        elif _LIST_ITEM.match(stripped):
            flush()
            current.append(stripped)
        else:
            current.append(stripped)
    flush()
    return result


def bbcode(text: str, known_classes: Callable[[str], bool], members: dict[str, str] | None = None) -> str:
    """`text` in Godot's class-reference markup: one paragraph per line, `code` as [code]...[/code],
    a known class as a [ClassName] link (in backticks, or a CamelCase word in the prose), a member of
    the documented class (`members`: name -> "member", "method" or "signal") as its link, **bold** as
    [b]...[/b], literal brackets as [lb] and [rb]."""
    members = members or {}

    def code(span: str) -> str:
        name = span[:-2] if span.endswith("()") else span
        if known_classes(span):
            return f"[{span}]"
        if name in members:
            return f"[{members[name]} {name}]"
        return f"[code]{_brackets(span)}[/code]"

    def prose(span: str) -> str:
        span = _brackets(span)
        return _CAMEL_WORD.sub(lambda m: f"[{m[0]}]" if known_classes(m[0]) else m[0], span)

    def convert(paragraph: str) -> str:
        out, last = [], 0
        for match in _INLINE.finditer(paragraph):
            out.append(prose(paragraph[last : match.start()]))
            out.append(code(match[1]) if match[1] is not None else f"[b]{prose(match[2])}[/b]")
            last = match.end()
        out.append(prose(paragraph[last:]))
        return "".join(out)

    return "\n".join(convert(p) for p in paragraphs(text))


def _brackets(text: str) -> str:
    return "".join("[lb]" if c == "[" else "[rb]" if c == "]" else c for c in text)


def _known_classes() -> Callable[[str], bool]:
    names = set(interface.API.get("classes", ()) if interface.API else ())
    names.update(info.name for info in classdb.classes[1:] if info is not None)
    return names.__contains__


def class_xml(info: classdb.ClassInfo, known_classes: Callable[[str], bool] | None = None) -> str:
    """The class reference of one Python-defined class, as the editor's help loads it."""
    known = known_classes or _known_classes()
    cls = info.cls
    found = classdb._members(cls)
    kinds = {
        attr: "member" if isinstance(v, Export) else "signal" if isinstance(v, Signal) else "method"
        for attr, v in found.items()
        if isinstance(v, (Export, Signal)) or callable(v)
    }

    def text(doc: str) -> str:
        return escape(bbcode(doc, known, kinds))

    brief, _, rest = inspect.cleandoc(info.doc or "").partition("\n\n")
    members, signals, methods = [], [], []
    for attr, value in found.items():
        if isinstance(value, Export):
            members.append(f'<member name="{attr}" type="{_type_name(value)}">{text(value.doc)}</member>')
        elif isinstance(value, Signal):
            signals.append(f'<signal name="{attr}"><description>{text(value.doc)}</description></signal>')
        elif callable(value) and getattr(value, "__doc__", None):
            virtual = hasattr(value, "_gd_virtual")
            if attr.startswith("_") and not virtual:
                continue
            qualifiers = ' qualifiers="virtual"' if virtual else ""
            description = f"<description>{text(value.__doc__ or '')}</description>"
            methods.append(f'<method name="{attr}"{qualifiers}>{description}</method>')
    return (
        f'<?xml version="1.0" encoding="UTF-8" ?>\n<class name="{info.name}" inherits="{info.parent}">'
        f"<brief_description>{text(brief)}</brief_description>"
        f"<description>{text(rest)}</description>"
        f"<methods>{''.join(methods)}</methods><members>{''.join(members)}</members>"
        f"<signals>{''.join(signals)}</signals></class>"
    )


def _type_name(export: Export) -> str:
    spec = export.spec
    return "Variant" if spec is None or spec.vtype == T.NIL else spec.type_name


def documented_classes() -> Iterable[classdb.ClassInfo]:
    return (info for info in classdb.classes[1:] if info is not None and info.doc and not info.internal)


def load_into_editor() -> None:
    load = interface.ffi.cast(
        "GDExtensionsInterfaceEditorHelpLoadXmlFromUtf8CharsAndLen",
        interface.lib.gdb_get_proc(b"editor_help_load_xml_from_utf8_chars_and_len"),
    )
    known = _known_classes()
    for info in documented_classes():
        data = class_xml(info, known).encode()
        load(data, len(data))
