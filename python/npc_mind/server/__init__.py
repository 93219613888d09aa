"""The engine-agnostic server: one object that owns every memory pool, selector and decision.

Front ends (the Godot `NpcMindServer` singleton, or a plain Python game loop) register handles,
call `step()` once per frame, and turn the drained `ServerEvent`s into signals. Never imports Godot.
"""

from npc_mind.server.clock import ClockMode, ServerClock
from npc_mind.server.events import ServerEvent
from npc_mind.server.registry import TooManyHandlesError, UnknownHandleError
from npc_mind.threads import WrongThreadError

__all__ = [
    "ClockMode",
    "ServerClock",
    "ServerEvent",
    "TooManyHandlesError",
    "UnknownHandleError",
    "WrongThreadError",
]
