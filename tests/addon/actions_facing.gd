extends SceneTree
## MoveAction.face_motion in the engine, physics on (run with --fixed-fps 60): a CharacterBody3D
## walking straight to a Marker3D on +X turns about Y to face it (-Z forward: yaw -90 degrees) and
## keeps its pitch and roll; one with face_motion off keeps its facing; a CharacterBody2D walking
## to a Marker2D on +Y turns to it (+X forward: 90 degrees). The 3D walker's SightSense3D then sees
## what lies ahead of it on +X, which it could not see facing -Z. One JSON line per check.

const B = preload("res://tests/addon/utility_builders.gd")

var frame := 0
var walkers := {}
var memory: Node
var seen: Node3D


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func walker(label: String, body: Node, goal: Node, facing: bool) -> void:
	body.name = label
	root.add_child(body)
	goal.name = label + "Goal"
	root.add_child(goal)
	var move: Resource = ClassDB.instantiate("MoveAction")
	move.destination = "node"
	move.node = NodePath("../../" + label + "Goal")
	move.speed = 3.0 if body is CharacterBody3D else 120.0
	move.face_motion = facing
	var go: Resource = B.behavior("go", [B.consideration("go")])
	var typed: Array[MindAction] = [move]
	go.on_enter = typed
	var selector: Node = B.selector([go])
	body.add_child(selector)
	walkers[label] = [body, selector]


func _initialize() -> void:
	var turning := CharacterBody3D.new()
	turning.rotation_degrees = Vector3(0, 30, 0)
	var east := Marker3D.new()
	east.position = Vector3(10, 0, 0)
	walker("Turning", turning, east, true)
	memory = ClassDB.instantiate("MemoryStream")
	turning.add_child(memory)
	var rule: Resource = ClassDB.instantiate("SenseRule")
	rule.group = &"marked"
	var sight: Node = ClassDB.instantiate("SightSense3D")
	sight.field_of_view = 60.0
	sight.rules = [rule]
	turning.add_child(sight)
	seen = Node3D.new()
	seen.position = Vector3(14, 0, 0)  # ahead on +X: outside a 60-degree cone facing -Z or 30 degrees off it
	seen.add_to_group(&"marked")
	root.add_child(seen)
	var keeping := CharacterBody3D.new()
	keeping.rotation_degrees = Vector3(0, 30, 0)
	var east_too := Marker3D.new()
	east_too.position = Vector3(10, 0, 5)
	keeping.position = Vector3(0, 0, 5)
	walker("Keeping", keeping, east_too, false)
	var flat := CharacterBody2D.new()
	var south := Marker2D.new()
	south.position = Vector2(0, 400)
	walker("Flat", flat, south, true)


func _process(_delta: float) -> bool:
	frame += 1
	for label: String in walkers:
		walkers[label][1].evaluate({"go": 1.0})
	if frame == 2:
		check("facing -Z 30 degrees off +X, the walker does not see what is on +X", memory.get_memories().is_empty(), memory.get_memories())
	if frame == 40:
		var turning: CharacterBody3D = walkers["Turning"][0]
		var keeping: CharacterBody3D = walkers["Keeping"][0]
		var flat: CharacterBody2D = walkers["Flat"][0]
		check("the 3D walker moved toward +X", turning.global_position.x > 1.0, turning.global_position)
		check("it faces its heading: yaw -90 (its -Z on +X), level", is_equal_approx(turning.rotation_degrees.y, -90.0)
			and is_zero_approx(turning.rotation.x) and is_zero_approx(turning.rotation.z), turning.rotation_degrees)
		check("with face_motion off the facing is kept", is_equal_approx(keeping.rotation_degrees.y, 30.0)
			and keeping.global_position.x > 1.0, [keeping.rotation_degrees, keeping.global_position])
		check("the 2D walker faces its heading (+Y: 90 degrees)", is_equal_approx(flat.rotation_degrees, 90.0)
			and flat.global_position.y > 20.0, [flat.rotation_degrees, flat.global_position])
		var ids: Array = memory.get_memories().map(func(m: Dictionary) -> int: return m["entity_id"])
		check("turned, its sight sees what lies ahead", ids == [seen.get_instance_id()], ids)
		for node in root.get_children():
			node.free()
		print(JSON.stringify({"done": true}))
		return true
	return false
