"""Class reference XML for the editor's help, built from docstrings."""

from __future__ import annotations

from xml.sax.saxutils import escape

from gdbridge import classdb, objects
from gdbridge.declare import Export, Signal
from gdbridge.types import VariantType

T = VariantType


def class_xml(info: classdb.ClassInfo) -> str:
    cls = info.cls
    brief, _, rest = info.doc.partition("\n\n")
    members, signals, methods = [], [], []
    for attr, value in classdb._members(cls).items():
        if isinstance(value, Export):
            members.append(f'<member name="{attr}" type="{_type_name(value)}">{escape(value.doc)}</member>')
        elif isinstance(value, Signal):
            signals.append(f'<signal name="{attr}"><description>{escape(value.doc)}</description></signal>')
        elif callable(value) and getattr(value, "__doc__", None):
            virtual = hasattr(value, "_gd_virtual")
            if attr.startswith("_") and not virtual:
                continue
            qualifiers = ' qualifiers="virtual"' if virtual else ""
            description = escape(value.__doc__ or "")
            methods.append(
                f'<method name="{attr}"{qualifiers}><description>{description}</description></method>'
            )
    return (
        f'<?xml version="1.0" encoding="UTF-8" ?>\n<class name="{info.name}" inherits="{info.parent}">'
        f"<brief_description>{escape(brief)}</brief_description>"
        f"<description>{escape(rest)}</description>"
        f"<methods>{''.join(methods)}</methods><members>{''.join(members)}</members>"
        f"<signals>{''.join(signals)}</signals></class>"
    )


def _type_name(export: Export) -> str:
    spec = export.spec
    return "Variant" if spec is None or spec.vtype == T.NIL else spec.type_name


def load_into_editor() -> None:
    load = objects.ffi.cast(
        "GDExtensionsInterfaceEditorHelpLoadXmlFromUtf8CharsAndLen",
        objects.lib.gdb_get_proc(b"editor_help_load_xml_from_utf8_chars_and_len"),
    )
    for info in classdb.classes[1:]:
        if info is not None and info.doc:
            data = class_xml(info).encode()
            load(data, len(data))
