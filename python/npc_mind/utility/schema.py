"""The data format: a selector as plain dicts / JSON, field for field the Godot inspector resources.

    selector     {format, version, behaviors: [behavior...], momentum, tie_tolerance, commitment,
                  interrupt_margin, top_n, seed}
    behavior     (UtilityBehavior) {name, considerations: [consideration...], aggregation, weight,
                  tags, cooldown}
    consideration (UtilityConsideration) {input_key, curve_type, curve_params, points, weight,
                  veto_below, input_min, input_max, invert, per_target}

`curve_type` is a key of `curves.CURVE_TYPES`; `curve_params` holds that family's parameters by
name (missing ones take the family default); `points` is the [[x, y], ...] table of a "table"
curve (a baked Godot `Curve`) and empty otherwise. Unknown fields are errors, so a typo in an
exported resource is caught rather than silently ignored. `to_dict` writes every field.
`UtilitySelector.from_dict` / `from_json` / `to_dict` / `to_json` are the entry points; this module
is below the selector (it builds behaviors, the selector builds itself from them).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from npc_mind.utility.behavior import Behavior, Consideration
from npc_mind.utility.curves import CURVE_TYPES, Curve
from npc_mind.utility.errors import UtilityDefinitionError

if TYPE_CHECKING:
    from npc_mind.utility.selector import UtilitySelector

FORMAT = "npc_mind.utility"
VERSION = 1
SELECTOR_FIELDS = (
    "format", "version", "behaviors",
    "momentum", "tie_tolerance", "commitment", "interrupt_margin", "top_n", "seed",
)  # fmt: skip
BEHAVIOR_FIELDS = ("name", "considerations", "aggregation", "weight", "tags", "cooldown")
CONSIDERATION_FIELDS = (
    "input_key", "curve_type", "curve_params", "points", "weight", "veto_below",
    "input_min", "input_max", "invert", "per_target",
)  # fmt: skip


def selector_to_dict(selector: UtilitySelector) -> dict[str, Any]:
    settings = selector.settings
    return {
        "format": FORMAT,
        "version": VERSION,
        "behaviors": [_behavior_to_dict(behavior) for behavior in selector.behaviors],
        "momentum": settings.momentum,
        "tie_tolerance": settings.tie_tolerance,
        "commitment": settings.commitment,
        "interrupt_margin": settings.interrupt_margin,
        "top_n": settings.top_n,
        "seed": settings.seed,
    }


def _behavior_to_dict(behavior: Behavior) -> dict[str, Any]:
    return {
        "name": behavior.name,
        "considerations": [_consideration_to_dict(c) for c in behavior.considerations],
        "aggregation": behavior.aggregation,
        "weight": behavior.weight,
        "tags": list(behavior.tags),
        "cooldown": behavior.cooldown,
    }


def _consideration_to_dict(consideration: Consideration) -> dict[str, Any]:
    curve = consideration.curve
    params = curve.params()
    points = params.pop("points", ())
    return {
        "input_key": consideration.input_key,
        "curve_type": curve.type_name,
        "curve_params": params,
        "points": [list(point) for point in points],  # type: ignore[attr-defined]  # points is set only for table curves
        "weight": consideration.weight,
        "veto_below": consideration.veto_below,
        "input_min": curve.input_min,
        "input_max": curve.input_max,
        "invert": curve.invert,
        "per_target": consideration.per_target,
    }


def selector_parts(data: Mapping[str, Any]) -> tuple[list[Behavior], dict[str, Any]]:
    """A selector's behaviors and its settings by name, as `UtilitySelector(behaviors, **settings)`
    takes them (`UtilitySelector.from_dict`); any problem raises UtilityDefinitionError naming
    behavior and consideration."""
    _check_fields(data, SELECTOR_FIELDS, ("behaviors",), "selector")
    if data.get("format", FORMAT) != FORMAT:
        raise UtilityDefinitionError(f"selector: format must be {FORMAT!r}, got {data['format']!r}")
    if data.get("version", VERSION) != VERSION:
        raise UtilityDefinitionError(
            f"selector: unsupported version {data['version']!r}, this reads {VERSION}"
        )
    behaviors = data["behaviors"]
    if not isinstance(behaviors, list):
        raise UtilityDefinitionError("selector: behaviors must be a list")
    settings = {name: data[name] for name in SELECTOR_FIELDS[3:] if name in data}
    return [_behavior_from_dict(item, i) for i, item in enumerate(behaviors)], settings


def _behavior_from_dict(data: Any, position: int) -> Behavior:
    owner = f"behavior #{position}"
    _check_fields(data, BEHAVIOR_FIELDS, ("name", "considerations"), owner)
    owner = f"behavior {data['name']!r}"
    considerations = data["considerations"]
    if not isinstance(considerations, list):
        raise UtilityDefinitionError(f"{owner}: considerations must be a list")
    built = [_consideration_from_dict(item, i, owner) for i, item in enumerate(considerations)]
    fields = {name: data[name] for name in BEHAVIOR_FIELDS[2:] if name in data}
    return Behavior(data["name"], built, **fields)


def _consideration_from_dict(data: Any, position: int, owner: str) -> Consideration:
    _check_fields(
        data, CONSIDERATION_FIELDS, ("input_key", "curve_type"), f"{owner}, consideration #{position}"
    )
    where = f"{owner}, consideration {data['input_key']!r}"
    try:
        curve = _curve_from_dict(data)
        fields = {name: data[name] for name in ("weight", "veto_below", "per_target") if name in data}
        return Consideration(data["input_key"], curve, **fields)
    except UtilityDefinitionError as error:
        raise UtilityDefinitionError(f"{where}: {error}") from None


def _curve_from_dict(data: Mapping[str, Any]) -> Curve:
    curve_type = data["curve_type"]
    cls = CURVE_TYPES.get(curve_type) if isinstance(curve_type, str) else None
    if cls is None:
        raise UtilityDefinitionError(
            f"unknown curve_type {curve_type!r}, expected one of {', '.join(CURVE_TYPES)}"
        )
    given = data.get("curve_params") or {}
    if not isinstance(given, Mapping):
        raise UtilityDefinitionError(f"curve_params must be a mapping of name to number, got {given!r}")
    params = dict(given)
    unknown = sorted(set(params) - set(cls.param_names()) - {"points"})
    if unknown or "points" in params:
        bad = unknown or ["points (give it as the consideration's points field)"]
        raise UtilityDefinitionError(
            f"{curve_type} curve: unknown curve_params {bad}, expected {list(cls.param_names())}"
        )
    points = data.get("points") or []
    if curve_type == "table":
        params["points"] = points
    elif points:
        raise UtilityDefinitionError(f"{curve_type} curve: points are only for a table curve")
    common = {name: data[name] for name in ("input_min", "input_max", "invert") if name in data}
    return cls(**params, **common)


def _check_fields(data: Any, allowed: tuple[str, ...], required: tuple[str, ...], owner: str) -> None:
    if not isinstance(data, Mapping):
        raise UtilityDefinitionError(f"{owner}: expected a mapping, got {type(data).__name__}")
    unknown = sorted(set(data) - set(allowed))
    if unknown:
        raise UtilityDefinitionError(f"{owner}: unknown fields {unknown}, expected some of {list(allowed)}")
    missing = [name for name in required if name not in data]
    if missing:
        raise UtilityDefinitionError(f"{owner}: missing required fields {missing}")


def selector_to_json(selector: UtilitySelector, indent: int | None = 2) -> str:
    return json.dumps(selector_to_dict(selector), indent=indent, ensure_ascii=False)


def parse_json(text: str) -> Any:
    """A selector's JSON text as data for `selector_parts`."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise UtilityDefinitionError(f"selector: not valid JSON: {error}") from None
