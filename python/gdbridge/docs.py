"""Class reference XML for the editor's help, built from docstrings.

Docstrings are written as Markdown-ish plain text (wrapped lines, a blank line between paragraphs,
`code` in backticks, "- " list items). The editor's help renders Godot's class-reference markup, in
which each line of a description is a paragraph and code and links are BBCode tags, so `bbcode()`
converts one into the other.
"""

from __future__ import annotations

import enum
import inspect
import re
import textwrap
from collections.abc import Callable, Iterable, Iterator
from typing import Any
from xml.sax.saxutils import escape

from gdbridge import classdb, interface
from gdbridge.declare import Constant, Export, Signal, TypeSpec, type_spec, typed_from_hint
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


def documented_members(cls: type) -> Iterator[tuple[str, str, Any]]:
    """(kind, name, declaration) of every member the class reference describes, in declaration
    order: exports ("member"), signals ("signal") and the methods Godot sees that have a docstring
    ("method": public ones, and virtual overrides). Python-only methods and nested classes (an
    enum) are left out: they are not in ClassDB."""
    for attr, value in classdb._members(cls).items():
        if isinstance(value, Export):
            yield "member", attr, value
        elif isinstance(value, Signal):
            yield "signal", attr, value
        elif callable(value) and not isinstance(value, type) and getattr(value, "__doc__", None):
            virtual = hasattr(value, "_gd_virtual")
            hidden = getattr(value, "_gd_expose", attr) is None
            if virtual or not (hidden or attr.startswith("_")):
                yield "method", attr, value


def class_xml(info: classdb.ClassInfo, known_classes: Callable[[str], bool] | None = None) -> str:
    """The class reference of one Python-defined class, as the editor's help loads it."""
    known = known_classes or _known_classes()
    found = list(documented_members(info.cls))
    kinds = {attr: kind for kind, attr, _ in found}

    def text(doc: str) -> str:
        return escape(bbcode(doc, known, kinds))

    brief, rest = split_doc(info.doc)
    members, signals, methods = [], [], []
    for kind, attr, value in found:
        if kind == "member":
            members.append(f'<member name="{attr}" type="{_type_name(value)}">{text(value.doc)}</member>')
        elif kind == "signal":
            signals.append(f'<signal name="{attr}"><description>{text(value.doc)}</description></signal>')
        else:
            qualifiers = ' qualifiers="virtual"' if hasattr(value, "_gd_virtual") else ""
            description = f"<description>{text(value.__doc__ or '')}</description>"
            methods.append(f'<method name="{attr}"{qualifiers}>{description}</method>')
    return (
        f'<?xml version="1.0" encoding="UTF-8" ?>\n<class name="{info.name}" inherits="{info.parent}">'
        f"<brief_description>{text(brief)}</brief_description>"
        f"<description>{text(rest)}</description>"
        f"<methods>{''.join(methods)}</methods><members>{''.join(members)}</members>"
        f"<signals>{''.join(signals)}</signals></class>"
    )


def split_doc(doc: str) -> tuple[str, str]:
    """A class docstring's brief (its first paragraph) and the rest."""
    brief, _, rest = inspect.cleandoc(doc or "").partition("\n\n")
    return brief, rest


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


# --- the same reference as Markdown pages (docs/classes), no engine needed -------------------------
def markdown(text: str, page_of: Callable[[str], str | None], width: int = 100) -> str:
    """A docstring as Markdown: its paragraphs (wrapped to `width`, list items kept one a line with
    their continuations indented), and a class that has a page (`page_of(name)`: its file name, or
    None) linked where the docstring names it, in backticks or as a CamelCase word of the prose (as
    `bbcode` links it)."""

    def link(match: re.Match[str]) -> str:
        span = match[0]
        page = page_of(span[1:-1] if span.startswith("`") else span)
        return f"[{span}]({page})" if page else span

    out: list[str] = []
    previous_item = False
    for paragraph in paragraphs(text):
        item = bool(_LIST_ITEM.match(paragraph))
        if out and not (item and previous_item):
            out.append("")
        indent = "  " if item else ""
        linked = _LINKABLE.sub(link, paragraph)  # before wrapping: a link holds no space to break at
        out.append(textwrap.fill(linked, width, subsequent_indent=indent, break_on_hyphens=False))
        previous_item = item
    return "\n".join(out)


_LINKABLE = re.compile(rf"`[^`\n]+`|{_CAMEL_WORD.pattern}")


def _cell(text: str, page_of: Callable[[str], str | None]) -> str:
    """A docstring as one Markdown table cell: its paragraphs on one line, pipes escaped."""
    return markdown(text, page_of, width=10**6).replace("\n\n", " ").replace("\n", " ").replace("|", "\\|")


def _value(value: Any) -> str:
    """A default as GDScript writes it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, dict | list | tuple) and not value:
        return "{}" if isinstance(value, dict) else "[]"
    return str(value)


def _export_type(cls: type, attr: str, export: Export) -> str:
    spec = export.spec
    if spec is None:  # not registered (no engine): the same spec registration would make
        spec = classdb._spec_for(cls, attr, export.type)
        if export.hint:
            spec.hint, spec.hint_string = export.hint, export.hint_string
            typed_from_hint(spec)
    return _spec_name(spec)


def _spec_name(spec: TypeSpec | None) -> str:
    if spec is None:
        return "void"
    if isinstance(spec.py_type, type) and issubclass(spec.py_type, enum.IntEnum):
        return spec.py_type.__name__
    if spec.items:
        return f"{spec.type_name}[{', '.join(_spec_name(item) for item in spec.items)}]"
    return spec.type_name


def _signature(cls: type, attr: str, func: Any) -> str:
    """`name(arg: type, arg: type = default) -> type`, as ClassDB registers the method."""
    method = classdb._method_info(cls, attr, attr, func, func)
    first_default = len(method.args) - len(method.defaults)
    args = [
        f"{name}: {_spec_name(spec)}"
        + (f" = {_value(method.defaults[i - first_default])}" if i >= first_default else "")
        for i, (name, spec) in enumerate(method.args)
    ]
    if method.vararg:
        args.append("...")
    return f"{attr}({', '.join(args)}) -> {_spec_name(method.ret)}"


def class_markdown(info: classdb.ClassInfo, page_of: Callable[[str], str | None], appendix: str = "") -> str:
    """One class's reference page: its docstring, then its properties, methods, signals and
    constants with theirs (the declarations the editor's help is built from), then `appendix`."""
    cls = info.cls
    parent = f"[{info.parent}]({page_of(info.parent)})" if page_of(info.parent) else f"`{info.parent}`"
    brief, rest = split_doc(info.doc)
    lines = [f"# {info.name}", "", f"*Inherits {parent}.*", "", markdown(brief, page_of)]
    if rest:
        lines += ["", markdown(rest, page_of)]
    found = list(documented_members(cls))
    properties = [(attr, value) for kind, attr, value in found if kind == "member"]
    if properties:
        lines += ["", "## Properties", "", "| name | type | default | description |", "|---|---|---|---|"]
        for attr, value in properties:
            kind = _export_type(cls, attr, value)
            kind = f"[{kind}]({page_of(kind)})" if page_of(kind) else kind
            default = _value(value.default).replace("|", "\\|")
            lines.append(f"| `{attr}` | {kind} | `{default}` | {_cell(value.doc, page_of)} |")
    for title, wanted in (("Methods", "method"), ("Signals", "signal")):
        entries = [(attr, value) for kind, attr, value in found if kind == wanted]
        if not entries:
            continue
        lines += ["", f"## {title}", ""]
        for attr, value in entries:
            if wanted == "method":
                doc, signature = value.__doc__ or "", _signature(cls, attr, value)
            else:
                doc = value.doc
                signature = (
                    f"{attr}({', '.join(f'{a}: {_spec_name(type_spec(t))}' for a, t in value.args.items())})"
                )
            body = markdown(doc, page_of).replace("\n", "\n  ")
            lines.append(f"- `{signature}`" + (f"\n\n  {body}\n" if body else "\n"))
        lines[-1] = lines[-1].rstrip("\n")
    constants = _constants(cls)
    if constants:
        lines += ["", "## Constants", "", *constants]
    if appendix:
        lines += ["", appendix.strip("\n")]
    return "\n".join(lines) + "\n"


def _constants(cls: type) -> list[str]:
    lines = []
    for attr, value in classdb._members(cls).items():
        if isinstance(value, Constant):
            lines.append(f"- `{attr}` = {value.value}")
        elif isinstance(value, type) and issubclass(value, enum.IntEnum | enum.IntFlag):
            members = ", ".join(f"`{member.name}` = {member.value}" for member in value)
            own = value.__doc__ if value.__doc__ and value.__doc__ != enum.IntEnum.__doc__ else ""
            lines.append(f"- enum `{attr}`: {members}." + (f" {' '.join(paragraphs(own))}" if own else ""))
    return lines
