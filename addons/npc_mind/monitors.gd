extends Node
## Kept so projects that list this autoload still load. npc_mind's monitors are now registered by
## the server itself (python/npc_mind_godot/monitors.py) when its first node enters the tree, however
## the addon was enabled, with time monitors in milliseconds.
