extends SceneTree
## What the inspector shows by name: a behavior's and a consideration's resource_name follows its
## name / input key (also after a save and load), memory types and awareness tiers are class enums
## with the same constants, and a max_stability edit reaches the streams like every profile field.
## One JSON line per check.

const Build := preload("res://tests/addon/utility_builders.gd")


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func _initialize() -> void:
	var consideration := Build.consideration("threat", "saturating")
	var behavior := Build.behavior("attack", [consideration])
	behavior.name = &"flee"
	check("renaming a behavior renames its resource", behavior.resource_name == "flee", behavior.resource_name)
	var path := "user://inspector_names_behavior.tres"
	var saved := ResourceSaver.save(behavior, path)
	var loaded: Resource = ResourceLoader.load(path, "", ResourceLoader.CACHE_MODE_IGNORE)
	check("a loaded behavior and its consideration carry their names", saved == OK and loaded.resource_name == "flee" and loaded.considerations[0].resource_name == "threat", [saved, loaded.resource_name if loaded else null])
	DirAccess.remove_absolute(ProjectSettings.globalize_path(path))

	var types := ClassDB.class_get_enum_constants("MemoryStream", "MemoryType")
	check("memory types are a class enum", types == PackedStringArray(["TRIVIA", "OBSERVATION", "INTERACTION", "HOSTILE", "TRAUMA"]), types)
	var tiers := ClassDB.class_get_enum_constants("MemoryStream", "Awareness")
	check("awareness tiers are a class enum", tiers == PackedStringArray(["AWARENESS_NONE", "AWARENESS_PUZZLED", "AWARENESS_SEARCH", "AWARENESS_PURSUE"]), tiers)
	check("the constants keep their values", MemoryStream.HOSTILE == 3 and MemoryStream.AWARENESS_PURSUE == 3 and ClassDB.class_get_integer_constant_enum("MemoryStream", "TRAUMA") == &"MemoryType", ClassDB.class_get_integer_constant_enum("MemoryStream", "TRAUMA"))

	var profile: Resource = ClassDB.instantiate("MemoryProfile")
	var stream: Node = ClassDB.instantiate("MemoryStream")
	stream.profile = profile
	root.add_child(stream)
	var changes := [0]
	profile.changed.connect(func() -> void: changes[0] += 1)  # what the streams apply the profile on
	profile.max_stability = 4000.0
	check("a max_stability edit reaches the streams", changes[0] == 1, changes[0])
	stream.free()
	print(JSON.stringify({"done": true}))
	quit()
