extends SceneTree
## Bad configuration of sourced inputs: one configuration warning in the editor's list and one
## error at run time per node and cause, naming the node and the fix, never one per frame; the NPC
## keeps choosing on the rest (a source that cannot answer gives default_input or 0). One JSON
## line per check.

const FRAMES := 30


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func consideration(source: Resource, fallback := -1.0) -> Resource:
	var made: Resource = ClassDB.instantiate("UtilityConsideration")
	made.source = source
	made.curve_type = "linear"
	if fallback >= 0.0:
		made.use_default_input = true
		made.default_input = fallback
	return made


func source(kind: String, fields: Dictionary) -> Resource:
	var made: Resource = ClassDB.instantiate(kind)
	for field in fields:
		made.set(field, fields[field])
	return made


func selector_of(behaviors: Dictionary) -> Node:
	var typed: Array[UtilityBehavior] = []
	for behavior_name in behaviors:
		var behavior: Resource = ClassDB.instantiate("UtilityBehavior")
		behavior.name = StringName(behavior_name)
		var considerations: Array[UtilityConsideration] = []
		considerations.assign(behaviors[behavior_name])
		behavior.considerations = considerations
		typed.append(behavior)
	var made: Node = ClassDB.instantiate("UtilitySelector")
	made.behaviors = typed
	return made


func npc(named: String, body: Node, selector: Node, with_memory: bool) -> Node:
	body.name = named
	if with_memory:
		body.add_child(ClassDB.instantiate("MemoryStream"))
	selector.name = "Mind"
	body.add_child(selector)
	root.add_child(body)
	return selector


func _initialize() -> void:
	NpcMindServer.clock = "manual"
	var board := func() -> Resource: return consideration(source("BlackboardInput", {"key": &"boredom"}))
	# No MemoryStream: awareness reads nothing (0); idle still wins on the blackboard.
	var forgetful := npc("Forgetful", Node2D.new(), selector_of({
		"pursue": [consideration(source("AwarenessInput", {}))], "idle": [board.call()]}), false)
	# A NodePath to nothing (its default_input 0.7 stands in), a property the node lacks, a
	# blackboard value that is not a number.
	var confused := npc("Confused", Node2D.new(), selector_of({
		"climb": [consideration(source("PropertyInput", {"node_path": NodePath("Ladder"), "property": &"height"}), 0.7)],
		"heal": [consideration(source("PropertyInput", {"property": &"health"}))],
		"idle": [board.call()]}), true)
	# DistanceInput on an NPC that is not a Node2D/Node3D.
	var flat := npc("Flat", Node.new(), selector_of({
		"approach": [consideration(source("DistanceInput", {}))], "idle": [board.call()]}), true)
	await process_frame
	forgetful.set_blackboard_value(&"boredom", 0.5)
	confused.set_blackboard_value(&"boredom", "very")
	flat.set_blackboard_value(&"boredom", 0.5)
	flat.set_target(123)
	flat.get_parent().get_child(0).note_sighting(123, Vector2(5, 5))
	var warned := {}
	for selector in [forgetful, confused, flat]:
		warned[str(selector.get_parent().name)] = NpcMindDesigner.get_configuration_warnings(selector)
	check("the editor warns of the missing MemoryStream", _has(warned.Forgetful, "need a MemoryStream"), warned.Forgetful)
	check("the editor warns of the NodePath and the property", _has(warned.Confused, "'Ladder' resolves to nothing")
		and _has(warned.Confused, "has no property 'health'"), warned.Confused)
	for frame in FRAMES:
		NpcMindServer.advance(0.1)
	for frame in 3:
		forgetful.evaluate({})
		confused.evaluate({})
	var metrics: Dictionary = NpcMindServer.get_metrics()
	check("one error per node and cause, the repeats counted", metrics["mistakes/reported"] == 5.0
		and metrics["mistakes/repeats"] >= FRAMES, [metrics["mistakes/reported"], metrics["mistakes/repeats"]])
	check("the NPCs keep choosing on the rest", forgetful.choice == &"idle" and confused.choice == &"climb"
		and flat.choice == &"idle", [forgetful.choice, confused.choice, flat.choice])
	check("a source that cannot answer gives default_input, else 0", confused.get_sourced_inputs() == {
		"property(npc:Ladder:height)": 0.7, "property(npc:health)": 0.0, "blackboard(boredom)": 0.0},
		confused.get_sourced_inputs())
	forgetful.get_parent().free()  # an NPC freed while the feed reads it: the others go on
	flat.set_blackboard_value(&"boredom", 0.0)
	NpcMindServer.advance(0.1)
	check("a freed NPC leaves the feed, the others go on", flat.choice == &"approach"
		and NpcMindServer.get_metrics()["mistakes/reported"] == 5.0, flat.choice)
	print(JSON.stringify({"done": true}))
	quit()


func _has(warnings: PackedStringArray, text: String) -> bool:
	return Array(warnings).any(func(line: String) -> bool: return text in line)
