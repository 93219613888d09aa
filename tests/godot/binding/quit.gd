extends SceneTree
## Starts the engine (and Python) and quits: tests/test_binding_core.py start-up checks.


func _initialize() -> void:
	quit(0)
