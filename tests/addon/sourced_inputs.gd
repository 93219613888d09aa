extends SceneTree
## Sourced inputs (issue 23, item 2): a selector whose considerations read their inputs from
## sources (awareness and distance of its target, a memory's R, seconds since seen, a property of
## the NPC, a blackboard value) chooses by itself every frame, emitting behavior_changed with no
## script calling evaluate; its inputs are exactly what the same reads give by hand, and they score
## exactly as the same values passed in a Dictionary to a twin selector. One JSON line per check.

const HOSTILE_FLAG := 8  # the inspector's flags: bit t is MemoryStream type t
const ROUNDS := 40

var rng := RandomNumberGenerator.new()
var npc := Node2D.new()
var memory: Node
var selector: Node  # every input sourced
var twin: Node  # the same definition, fed by a Dictionary
var people: Array[Node2D] = []
var changes: Array = []


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func consideration(source: Resource, key: String, low: float, high: float, invert := false, weight := 1.0) -> Resource:
	var made: Resource = ClassDB.instantiate("UtilityConsideration")
	if source != null:
		made.source = source
	else:
		made.input_key = StringName(key)
	made.curve_type = "linear"
	made.input_min = low
	made.input_max = high
	made.invert = invert
	made.weight = weight
	return made


func source(kind: String, fields: Dictionary) -> Resource:
	var made: Resource = ClassDB.instantiate(kind)
	for field in fields:
		made.set(field, fields[field])
	return made


func behavior(behavior_name: String, considerations: Array) -> Resource:
	var made: Resource = ClassDB.instantiate("UtilityBehavior")
	made.name = StringName(behavior_name)
	var typed: Array[UtilityConsideration] = []
	typed.assign(considerations)
	made.considerations = typed
	return made


func build(sourced: bool) -> Node:
	var s := func(kind: String, fields: Dictionary) -> Resource: return source(kind, fields) if sourced else null
	var behaviors: Array[UtilityBehavior] = [
		behavior("pursue", [consideration(s.call("AwarenessInput", {}), "awareness(target)", 0.0, 3.0)]),
		behavior("search", [consideration(s.call("DistanceInput", {}), "distance(target)", 0.0, 100.0, true)]),
		behavior("idle", [consideration(s.call("BlackboardInput", {"key": &"boredom"}), "blackboard(boredom)", 0.0, 1.0)]),
		behavior("flee", [
			consideration(s.call("PropertyInput", {"property": &"position:x"}), "property(npc:position:x)", 0.0, 100.0, false, 0.3),
			consideration(s.call("RecallInput", {"of": "strongest", "memory_types": HOSTILE_FLAG}), "recall(strongest,hostile)", 0.0, 1.0, false, 0.3),
			consideration(s.call("SinceSeenInput", {}), "since_seen(target)", 0.0, 120.0, false, 0.3),
		]),
	]
	var made: Node = ClassDB.instantiate("UtilitySelector")
	made.behaviors = behaviors
	if sourced:
		made.target_from = "memory"
		made.target_memory_types = HOSTILE_FLAG
	return made


## What the sources should read, by hand through the nodes' own API.
func expected() -> Dictionary:
	var target: int = selector.get_target_id()
	var distance := 1.0e6
	var since_seen := 1.0e6
	if target != 0 and memory.get_last_known_position(target) != null:
		var there: Vector2 = memory.get_last_known_position(target)
		var here := npc.global_position
		var dx: float = here.x - there.x
		var dy: float = here.y - there.y
		distance = sqrt(dx * dx + dy * dy)
		since_seen = memory.get_seconds_since_seen(target)
	var strongest_hostile := 0.0
	for view in memory.get_memories():
		if view.memory_type == MemoryStream.HOSTILE:
			strongest_hostile = maxf(strongest_hostile, view.retrievability)
	return {
		"awareness(target)": float(memory.awareness_of(target)) if target != 0 else 0.0,
		"distance(target)": distance,
		"blackboard(boredom)": float(selector.get_blackboard_value(&"boredom", 0.0)),
		"property(npc:position:x)": float(npc.position.x),
		"recall(strongest,hostile)": strongest_hostile,
		"since_seen(target)": since_seen,
	}


func _initialize() -> void:
	rng.seed = 23
	NpcMindServer.clock = "manual"
	memory = ClassDB.instantiate("MemoryStream")
	selector = build(true)
	twin = build(false)
	npc.add_child(memory)
	npc.add_child(selector)
	root.add_child(npc)
	root.add_child(twin)
	for i in 3:
		var person := Node2D.new()
		root.add_child(person)
		people.append(person)
	await process_frame
	selector.behavior_changed.connect(func(behavior_name: StringName) -> void: changes.append(behavior_name))
	check("auto_evaluate: on when every input is sourced", selector.auto_evaluate == "when_all_sourced"
		and selector.get_sourced_inputs().size() == 6, selector.get_sourced_inputs())
	# No script calls evaluate from here to the check below: the selector chooses by itself.
	selector.set_blackboard_value(&"boredom", 0.9)
	NpcMindServer.advance(0.1)
	var thief: int = people[0].get_instance_id()
	memory.record_event(thief, MemoryStream.HOSTILE, 0.9)
	memory.note_sighting(thief, Vector2(30, 0))
	NpcMindServer.advance(0.1)
	selector.set_blackboard_value(&"boredom", 0.2)
	NpcMindServer.advance(430.0)  # R ~0.6: awareness search, the thief 30 px away
	check("it chooses by itself and emits behavior_changed, no evaluate called", changes == [&"idle", &"pursue", &"search"]
		and selector.choice == &"search", changes)
	var wrong_inputs := []
	var wrong_scores := []
	var wrong_choices := []
	for round_index in ROUNDS:
		if rng.randf() < 0.6:
			var person: Node2D = people[rng.randi_range(0, 2)]
			var kind := MemoryStream.HOSTILE if rng.randf() < 0.7 else MemoryStream.OBSERVATION
			memory.record_event(person.get_instance_id(), kind, rng.randf())
			memory.note_sighting(person.get_instance_id(), Vector2(rng.randf_range(-80, 80), rng.randf_range(-80, 80)))
		npc.position = Vector2(rng.randf_range(0, 100), rng.randf_range(-50, 50))
		var boredom := rng.randf()
		if round_index % 2 == 0:
			selector.set_blackboard_value(&"boredom", boredom)
		else:
			selector.blackboard = {"boredom": boredom}  # assigned whole: read again as a write is
		NpcMindServer.advance(rng.randf_range(0.5, 90.0))
		var want := expected()
		var got: Dictionary = selector.get_sourced_inputs()
		if got != want:
			wrong_inputs.append([round_index, got, want])
		var by_hand: StringName = twin.evaluate(want)
		if selector.choice != by_hand:
			wrong_choices.append([round_index, selector.choice, by_hand])
		var sourced_choice: StringName = selector.evaluate({})
		if sourced_choice != by_hand or selector.get_scores() != twin.get_scores():
			wrong_scores.append([round_index, selector.get_scores(), twin.get_scores()])
	check("each sourced input is exactly what the nodes' own reads give", wrong_inputs.is_empty(), wrong_inputs.slice(0, 3))
	check("evaluate() with sourced inputs scores exactly as the Dictionary of the same values", wrong_scores.is_empty(), wrong_scores.slice(0, 3))
	check("the automatic (batched) choice is the Dictionary path's", wrong_choices.is_empty(), wrong_choices.slice(0, 3))
	check("the Remote inspector shows the sourced inputs", selector.live_inputs == expected(), selector.live_inputs)
	var original: Array[UtilityBehavior] = selector.behaviors
	var redefined: Array[UtilityBehavior] = []
	redefined.assign(selector.behaviors.slice(1))  # pursue dropped at run time
	selector.behaviors = redefined
	selector.set_blackboard_value(&"boredom", 0.0)
	NpcMindServer.advance(0.1)
	var not_bored: StringName = selector.choice
	selector.blackboard = {"boredom": 1.0}  # assigned whole: read at the next choice, as a write is
	NpcMindServer.advance(0.1)
	check("redefined at run time, it goes on choosing by itself, reading the blackboard assigned whole",
		not_bored != &"idle" and selector.choice == &"idle"
		and selector.get_behavior_names() == PackedStringArray(["search", "idle", "flee"]), [not_bored, selector.choice])
	selector.behaviors = original
	selector.evaluate({"awareness(target)": 3.0, "blackboard(boredom)": 0.0})
	var scores: Dictionary = selector.get_scores()
	check("a value the context gives wins over the sourced one (boredom is 1 on the blackboard)",
		scores.pursue == 1.0 and scores.idle == 0.0, scores)
	print(JSON.stringify({"done": true}))
	quit()
