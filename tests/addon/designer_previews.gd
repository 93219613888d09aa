extends SceneTree
## The inspector's designer previews, built outside the editor (they need no editor class): the
## curve preview of a UtilityConsideration for every curve family (its samples, the typed
## parameter fields, an edit through a field, an invalid parameter) and the MemoryProfile preview.
## One JSON line per check.


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func _initialize() -> void:
	var CurvePreview: GDScript = load("res://addons/npc_mind/inspector/curve_preview.gd")
	var ProfilePreview: GDScript = load("res://addons/npc_mind/inspector/profile_preview.gd")
	var families: PackedStringArray = NpcMindDesigner.get_curve_types()
	check("every family is listed", families.size() == 9, families)
	for family in families:
		var consideration: Resource = ClassDB.instantiate("UtilityConsideration")
		consideration.input_key = &"threat"
		consideration.curve_type = family
		if family == "table":
			var curve := Curve.new()
			curve.add_point(Vector2(0, 0))
			curve.add_point(Vector2(1, 1))
			consideration.curve = curve
		var preview: Control = CurvePreview.new()
		root.add_child(preview)
		preview.bind(consideration)
		var specs: Array = NpcMindDesigner.get_curve_parameters(family)
		var finite: bool = preview.scores.size() == preview.SAMPLES
		for score in preview.scores:
			finite = finite and is_finite(score) and score >= 0.0 and score <= 1.0
		check("%s: preview sampled" % family, finite and preview.error == "", [preview.scores.size(), preview.error])
		var names: Array = []
		for spec: Dictionary in specs:
			names.append(spec.name)
		check("%s: one field per parameter" % family, preview.param_fields.keys() == names, [preview.param_fields.keys(), names])
		if not specs.is_empty():
			var first: Dictionary = specs[0]
			var before: PackedFloat64Array = preview.scores.duplicate()
			var field: Range = preview.param_fields[first.name]
			field.set_value_no_signal(float(first.default) + 0.25)
			field.value_changed.emit(field.value)  # as a designer's edit of the field does
			check("%s: a field edits curve_params" % family, is_equal_approx(float(consideration.curve_params[first.name]), float(first.default) + 0.25), consideration.curve_params)
			check("%s: and the curve redraws" % family, preview.scores != before)
		preview.queue_free()
	# A new consideration (no input key yet) still shows its curve.
	var fresh: Resource = ClassDB.instantiate("UtilityConsideration")
	var fresh_preview: Control = CurvePreview.new()
	root.add_child(fresh_preview)
	fresh_preview.bind(fresh)
	check("a consideration without a key previews", fresh_preview.error == "" and fresh_preview.scores.size() == fresh_preview.SAMPLES, fresh_preview.error)
	# A parameter the family rejects: the preview says why instead of drawing.
	var bad: Resource = ClassDB.instantiate("UtilityConsideration")
	bad.input_key = &"x"
	bad.curve_type = "saturating"
	bad.curve_params = {"k": 0.0}
	var bad_preview: Control = CurvePreview.new()
	root.add_child(bad_preview)
	bad_preview.bind(bad)
	check("an invalid parameter is reported", bad_preview.error.contains("k must be in"), bad_preview.error)
	var profile: Resource = ClassDB.instantiate("MemoryProfile")
	var profile_preview: Control = ProfilePreview.new()
	root.add_child(profile_preview)
	profile_preview.bind(profile)
	var result: Dictionary = profile_preview.result
	var stability: Array = result.get("stability", [])
	check("profile: a curve per memory type", result.error == "" and result.r.size() == 5 and stability == [5.0, 30.0, 120.0, 600.0, 3600.0], result.get("stability"))
	var hostile: PackedFloat64Array = result.r[3]
	var age: float = profile_preview.ages[100]
	check("profile: R = e^(-t/S)", absf(hostile[100] - exp(-age / 600.0)) < 1e-9, [hostile[100], exp(-age / 600.0)])
	profile.awareness_search = 0.9
	profile_preview.refresh(false)
	check("profile: an invalid profile is reported", profile_preview.result.error != "", profile_preview.result.error)
	check_max_stability()
	print(JSON.stringify({"done": true}))
	quit()


## MemoryProfile.max_stability caps S however often a memory is rehearsed (a mob bumped again and
## again); without it S grows far past the cap.
func check_max_stability() -> void:
	NpcMindServer.clock = "manual"
	var grown := {}
	for cap in [200.0, 2592000.0]:
		var profile: Resource = ClassDB.instantiate("MemoryProfile")
		profile.stability_hostile = 150.0
		profile.stability_trauma = 200.0
		profile.max_stability = cap
		var memory: Node = ClassDB.instantiate("MemoryStream")
		memory.profile = profile
		root.add_child(memory)
		for bump in 20:
			memory.record_event(7, MemoryStream.HOSTILE, 1.0)
			NpcMindServer.advance(3.0)  # past the 2 s refractory period: each bump rehearses
		grown[cap] = memory.get_memories()[0].stability
		memory.queue_free()
	check("profile: max_stability caps S", grown[200.0] <= 200.0 and grown[2592000.0] > 200.0, grown)
