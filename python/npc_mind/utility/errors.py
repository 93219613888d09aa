"""Exceptions of the utility AI: every message names the behavior and consideration at fault."""


class UtilityError(ValueError):
    """Base class of all utility AI errors."""


class UtilityDefinitionError(UtilityError):
    """A curve, consideration, behavior or selector definition is invalid."""


class MissingInputError(UtilityError, KeyError):
    """A consideration's input key is missing from the context at scoring time."""

    def __str__(self) -> str:
        # KeyError would print the repr of the message; keep it readable.
        return str(self.args[0]) if self.args else ""


def definition_number(value: object) -> float | None:
    """A definition's number field as a float, or None when it is not a real number: an int or a
    float (numpy's too) that a float can hold. A bool, a string (even "1") or an int too large
    for a float is not one: the caller raises its UtilityDefinitionError naming the field."""
    if isinstance(value, bool | str | bytes) or not hasattr(value, "__float__"):
        return None
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        return None
