"""Utility AI that designers can tune: response curves, considerations, behaviors, selection.

    from npc_mind.utility import Behavior, Consideration, UtilitySelector
    from npc_mind.utility.curves import Saturating

    attack = Behavior("attack", [Consideration("enemy_distance", Saturating(k=5.0), weight=0.6)])
    selector = UtilitySelector([attack, ...])
    selector.rank(context)            # [(name, score), ...] best first
    selector.choose(context, now)     # the behavior to run, with anti-dithering
    selector.score_batch(inputs)      # (N, B) scores for N NPCs in a few numpy passes

Data format (dict / JSON, one to one with the Godot resources): see `schema`.
"""

from npc_mind.utility import curves
from npc_mind.utility.batch import BatchScorer
from npc_mind.utility.behavior import Behavior, BehaviorExplanation, Consideration, ConsiderationExplanation
from npc_mind.utility.errors import MissingInputError, UtilityDefinitionError, UtilityError
from npc_mind.utility.selector import AntiDithering, Choice, InputFallback, SelectorBatch, UtilitySelector

__all__ = [
    "AntiDithering",
    "BatchScorer",
    "Behavior",
    "BehaviorExplanation",
    "Choice",
    "Consideration",
    "ConsiderationExplanation",
    "InputFallback",
    "MissingInputError",
    "SelectorBatch",
    "UtilityDefinitionError",
    "UtilityError",
    "UtilitySelector",
    "curves",
]
