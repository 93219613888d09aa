"""`npc_mind.decision`: LLM decisions that never freeze the game.

The LLM is only an advisor: the local AI (a utility selector, or `RuleChooser`) always has an answer.
`AsyncDecision.tick` never blocks; requests work on frozen snapshots off the main thread; results carry
an epoch and are merged at the start of a tick only if still current; a watchdog and three tiers
decide what happens when the model is slow or gone. `DecisionHub` runs many NPCs in one call per frame.
"""

from npc_mind.decision.blackboard import CommitSlot, freeze
from npc_mind.decision.config import DecisionConfig
from npc_mind.decision.events import DecisionFallback, DecisionMade, Event, ThinkingStarted
from npc_mind.decision.hub import DecisionHub
from npc_mind.decision.machine import AsyncDecision, Cancellable, MemorySource, Transport
from npc_mind.decision.metrics import DecisionStats
from npc_mind.decision.rules import Chooser, Rule, RuleChooser

__all__ = [
    "AsyncDecision",
    "Cancellable",
    "Chooser",
    "CommitSlot",
    "DecisionConfig",
    "DecisionFallback",
    "DecisionHub",
    "DecisionMade",
    "DecisionStats",
    "Event",
    "MemorySource",
    "Rule",
    "RuleChooser",
    "ThinkingStarted",
    "Transport",
    "freeze",
]
