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
