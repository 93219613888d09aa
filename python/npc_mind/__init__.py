"""npc_mind: believable NPC minds, as a plain Python library and as a Godot 4 addon.

- `npc_mind.memory`: working memory that forgets non-linearly (R = e^(-t/S)).
- `npc_mind.utility`: utility AI scoring with response curves.
- `npc_mind.decision` / `npc_mind.llm`: LLM decisions that never block the game.

The core never imports Godot.
"""

from npc_mind._version import __version__

__all__ = ["__version__"]
