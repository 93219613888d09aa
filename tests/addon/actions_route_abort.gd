extends SceneTree
## MoveAction along a route and AbortDecisionAction, in the engine with physics on (run with
## --fixed-fps 60). A patrol walks its route's Marker2D children in order and loops; the route is
## top_level, so it stays put while the NPC moves. A flee whose on_enter aborts the NPC's decision
## drops the fallback owed in the very frame it begins (no signal, decision_aborted once), while the
## same flee without the action lets it through. One JSON line per check.

const B = preload("res://tests/addon/utility_builders.gd")
const STOPS := [Vector2(100, 0), Vector2(100, 100), Vector2(0, 100)]

var frame := 0
var walker: CharacterBody2D
var walker_selector: Node
var route: Node2D
var visits := []
var scared := {}  # label -> [selector, decision, signals]


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func fearful(label: String, aborts: bool) -> void:
	var npc := Node2D.new()
	npc.name = label
	root.add_child(npc)
	npc.add_child(ClassDB.instantiate("MemoryStream"))
	var decision: Node = ClassDB.instantiate("AsyncLLMDecision")
	decision.allowed_intents = PackedStringArray(["flee", "idle"])
	decision.endpoint = ""
	npc.add_child(decision)
	var signals := []
	decision.decision_fallback.connect(func(_tier: int, reason: String) -> void: signals.append(reason))
	decision.decision_made.connect(func(intent: StringName, _u: float, _t: int) -> void: signals.append(String(intent)))
	decision.decision_aborted.connect(func() -> void: signals.append("aborted"))
	var flee: Resource = B.behavior("flee", [B.consideration("danger")])
	if aborts:
		flee.on_enter = B.actions([ClassDB.instantiate("AbortDecisionAction")])
	var idle: Resource = B.behavior("idle", [B.consideration("calm")])
	var selector: Node = B.selector([flee, idle])
	selector.auto_evaluate = "never"
	npc.add_child(selector)
	scared[label] = [selector, decision, signals]


func _initialize() -> void:
	walker = CharacterBody2D.new()
	walker.name = "Walker"
	root.add_child(walker)
	route = Node2D.new()
	route.name = "Route"
	route.top_level = true
	walker.add_child(route)
	for at: Vector2 in STOPS:
		var stop := Marker2D.new()
		stop.position = at
		route.add_child(stop)
	var move: Resource = ClassDB.instantiate("MoveAction")
	move.destination = "route"
	move.node = NodePath("../Route")
	move.speed = 600.0
	move.arrive_distance = 4.0
	var patrol: Resource = B.behavior("patrol", [B.consideration("calm")])
	patrol.on_enter = B.actions([move])
	walker_selector = B.selector([patrol])
	walker_selector.auto_evaluate = "never"
	walker.add_child(walker_selector)
	check("no warning for a route with waypoints", NpcMindDesigner.get_configuration_warnings(walker_selector).is_empty(),
		NpcMindDesigner.get_configuration_warnings(walker_selector))
	var empty := Node2D.new()
	empty.name = "Nowhere"
	walker.add_child(empty)
	var lost: Resource = move.duplicate()
	lost.node = NodePath("../Nowhere")
	var lost_behavior: Resource = B.behavior("lost", [B.consideration("calm")])
	lost_behavior.on_enter = B.actions([lost])
	var lost_selector: Node = B.selector([lost_behavior])
	lost_selector.auto_evaluate = "never"
	walker.add_child(lost_selector)
	var warnings: PackedStringArray = NpcMindDesigner.get_configuration_warnings(lost_selector)
	check("a route with no waypoints is a configuration warning", warnings.size() == 1
		and "has no Node2D/Node3D children" in warnings[0], warnings)
	walker.remove_child(lost_selector)
	lost_selector.free()
	fearful("Aborts", true)
	fearful("Waits", false)


func _physics_process(_delta: float) -> bool:
	for index in STOPS.size():
		if walker.global_position.distance_to(STOPS[index]) <= 5.0 and (visits.is_empty() or visits[-1] != index):
			visits.append(index)
	return false


func _process(_delta: float) -> bool:
	frame += 1
	walker_selector.evaluate({"calm": 1.0})
	for label: String in scared:
		var selector: Node = scared[label][0]
		selector.evaluate({"danger": 1.0 if frame >= 10 else 0.0, "calm": 0.5})
		if frame == 10:  # asked: with no endpoint its fallback is owed at the end of this frame,
			scared[label][1].request_decision({"situation": "a noise"})  # with the flee's change
	if frame == 30:
		check("a flee that aborts: no signal owed in its frame is emitted, decision_aborted once",
			scared["Aborts"][2] == ["aborted"], scared["Aborts"][2])
		check("the same flee without it: the fallback arrives", scared["Waits"][2] == ["no_endpoint"], scared["Waits"][2])
	if frame == 150:
		check("the patrol visits its waypoints in order and loops", visits.slice(0, 5) == [0, 1, 2, 0, 1], visits)
		var placed := route.get_children().map(func(stop: Node2D) -> Vector2: return stop.global_position)
		check("the top_level route stays put while the NPC moves", placed == STOPS, placed)
		print(JSON.stringify({"done": true}))
		return true
	return false
