extends SceneTree
## The local model started by the game itself (NPC_MIND_START_LOCAL_MODEL=1, as the project setting
## npc_mind/llm/start_local_model would): the check node of tests/ship/local_model.gd asks once and
## its answer is applied. Prints one JSON line per check.


func _initialize() -> void:
	root.add_child(load("res://tests/ship/local_model.gd").new())
