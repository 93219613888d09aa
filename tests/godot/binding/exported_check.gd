extends Node
## The scene run inside the exported binding project (tests/test_ship_export.py): the project's own
## Python module (python/paths = res://, entry module binding_classes) comes from python/res/
## beside the binary, so its classes exist.


func _ready() -> void:
	print(JSON.stringify({"check": "project module", "ok": ClassDB.class_exists("Probe")}))
	get_tree().quit(0)
