extends SceneTree
## Run in a fresh game with the unzipped addon (tests/test_ship_addon.py): imports everything the
## addon uses from its own runtime (tests/ship/runtime_imports.py) and reports what failed.


func _init() -> void:
	var probe: Object = ClassDB.instantiate("RuntimeImports")
	var names := FileAccess.get_file_as_string("res://stdlib_modules.json")
	var report: Variant = probe.failures(names)  # null when the method itself raised
	var result: Dictionary = JSON.parse_string(report) if report is String else {"failed": {"failures()": "raised"}}
	print(JSON.stringify({"check": "imports", "ok": result["failed"].is_empty(), "detail": result}))
	probe.free()
	print(JSON.stringify({"done": true}))
	quit()
