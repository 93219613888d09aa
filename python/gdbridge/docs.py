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
    for attr, value in cls.__dict__.items():
        if isinstance(value, Export):
            members.append(f'<member name="{attr}" type="{_type_name(value)}">{escape(value.doc)}</member>')
        elif isinstance(value, Signal):
            signals.append(f'<signal name="{attr}"><description>{escape(value.doc)}</description></signal>')
        elif callable(value) and not attr.startswith("_") and getattr(value, "__doc__", None):
            methods.append(
                f'<method name="{attr}"><description>{escape(value.__doc__ or "")}</description></method>'
            )
    return (
        f'<?xml version="1.0" encoding="UTF-8" ?>\n<class name="{info.name}" inherits="{info.parent}">'
        f"<brief_description>{escape(brief)}</brief_description>"
        f"<description>{escape(rest)}</description>"
        f"<methods>{''.join(methods)}</methods><members>{''.join(members)}</members>"
        f"<signals>{''.join(signals)}</signals></class>"
    )


# Godot's spelling where the enum name does not give it.
_NAMES = {T.NIL: "Variant", T.BOOL: "bool", T.INT: "int", T.FLOAT: "float", T.STRING: "String"}
_NAMES.update({T.AABB: "AABB", T.RID: "RID"})


def _type_name(export: Export) -> str:
    spec = export.spec
    if spec is None:
        return "Variant"
    if spec.class_name:
        return spec.class_name
    return _NAMES.get(spec.vtype) or VariantType(spec.vtype).name.title().replace("_", "")


def load_into_editor() -> None:
    load = objects.ffi.cast(
        "GDExtensionsInterfaceEditorHelpLoadXmlFromUtf8CharsAndLen",
        objects.lib.gdb_get_proc(b"editor_help_load_xml_from_utf8_chars_and_len"),
    )
    for info in classdb.classes[1:]:
        if info is not None and info.doc:
            data = class_xml(info).encode()
            load(data, len(data))
