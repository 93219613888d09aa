"""A small guard world shared by the decision tests: intents, a real utility selector whose behaviors
are tagged with those intents, and deterministic fallback rules."""

from __future__ import annotations

from npc_mind.decision import Rule, RuleChooser
from npc_mind.llm import DecisionSchema
from npc_mind.utility import Behavior, Consideration, UtilitySelector
from npc_mind.utility.curves import Linear

INTENTS = ("attack", "take_cover", "flee", "patrol")
SCHEMA = DecisionSchema(INTENTS)
GRENADE_REACTION = "dive_away"


def selector() -> UtilitySelector:
    rising = Linear(m=1.0)
    falling = Linear(m=-1.0, b=1.0)
    return UtilitySelector([
        Behavior(
            "shoot", [Consideration("threat", rising), Consideration("health", rising)], tags=["attack"]
        ),
        Behavior("charge", [Consideration("threat", rising, weight=0.5)], tags=["attack"]),
        Behavior("crouch_behind_wall", [Consideration("threat", rising, weight=0.8)], tags=["take_cover"]),
        Behavior("run_to_exit", [Consideration("health", falling)], tags=["flee"]),
        Behavior("walk_route", [Consideration("threat", falling)], tags=["patrol"]),
        Behavior(GRENADE_REACTION, [Consideration("grenade", rising, weight=10.0)], tags=["flee"]),
    ])  # fmt: skip


def rules() -> RuleChooser:
    return RuleChooser(
        [
            Rule(GRENADE_REACTION, "grenade", 0.5, tags=frozenset({"flee"})),
            Rule("run_to_exit", "health", 0.25, below=True, tags=frozenset({"flee"})),
            Rule("crouch_behind_wall", "threat", 0.5, tags=frozenset({"take_cover"})),
        ],
        default="walk_route",
    )


def board(threat: float = 0.6, health: float = 0.9, grenade: float = 0.0) -> dict[str, float]:
    return {"threat": threat, "health": health, "grenade": grenade}
