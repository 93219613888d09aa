extends SceneTree
## Frame time of actions without code against the same movement in plain GDScript, in one engine
## run (run with --fixed-fps 60: one physics frame a frame; the frame cap lifted). Each NPC, a
## CharacterBody2D, moves toward a far Marker2D (it never arrives) and sets a property every physics
## frame: first nothing runs (the empty frame), then each NPC's GDScript _physics_process does it,
## then a UtilitySelector's behavior does it with a MoveAction (on_enter) and a SetPropertyAction
## (on_tick). The movers' physics processing is turned off once the tree is ready (the engine turns
## it on at NOTIFICATION_READY for a script that has _physics_process, and `_initialize` runs before
## the root enters the tree), so the empty frame is empty; each phase reports how many bodies were
## physics processing in it. Prints one JSON line: each phase's frame intervals in milliseconds, its
## CPU time per frame (/proc) and those counts.

const B = preload("res://tests/addon/utility_builders.gd")
const Senses = preload("res://benchmarks/bench_senses.gd")
const SPEED := 100.0
const WARMUP := 30

var npcs := 200
var frames := 60
var phases := ["empty", "gdscript", "actions"]
var phase_at := 0
var frame_in_phase := 0
var last_usec := 0
var intervals := {"empty": [], "gdscript": [], "actions": []}
var cpu_ms := {}
var processing := {}  # phase -> bodies physics processing (their own _physics_process) in it
var cpu_start := 0.0
var ready := false
var bodies: Array[CharacterBody2D] = []

const MOVER := """extends CharacterBody2D
var goal: Node2D
var speed := 100.0
func _physics_process(_delta: float) -> void:
	var heading := goal.global_position - global_position
	if heading.length() > 8.0:
		velocity = heading * (speed / heading.length())
		move_and_slide()
	modulate.a = 0.5
"""


func _initialize() -> void:
	for argument in OS.get_cmdline_user_args():
		var parts := argument.trim_prefix("--").split("=")
		match parts[0]:
			"npcs": npcs = parts[1].to_int()
			"frames": frames = parts[1].to_int()
	var world := Node2D.new()
	world.name = "World"
	root.add_child(world)
	var markers := []
	for i in 4:
		var marker := Marker2D.new()
		marker.name = "Post%d" % i
		marker.position = Vector2(1e6, 0.0).rotated(i * PI / 2.0)
		world.add_child(marker)
		markers.append(marker)
	var mover := GDScript.new()
	mover.source_code = MOVER
	mover.reload()
	var rng := RandomNumberGenerator.new()
	rng.seed = 7
	for i in npcs:
		var body := CharacterBody2D.new()
		body.name = "Npc%d" % i
		body.position = Vector2(rng.randf() * 1280.0, rng.randf() * 720.0)
		body.set_script(mover)
		body.goal = markers[i % 4]
		world.add_child(body)
		body.set_physics_process(false)  # after add_child: ready turns it on for a script that has it
		bodies.append(body)


func _add_actions() -> void:
	for i in bodies.size():
		var body := bodies[i]
		body.set_physics_process(false)
		var move: Resource = ClassDB.instantiate("MoveAction")
		move.destination = "node"
		move.node = NodePath("../../Post%d" % (i % 4))
		move.speed = SPEED
		var fade: Resource = ClassDB.instantiate("SetPropertyAction")
		fade.property = &"modulate:a"
		fade.value = 0.5
		var go: Resource = B.behavior("go", [B.consideration("go")])
		var enter: Array[MindAction] = [move]
		var tick: Array[MindAction] = [fade]
		go.on_enter = enter
		go.on_tick = tick
		var selector: Node = B.selector([go])
		body.add_child(selector)
		selector.evaluate({"go": 1.0})


func _process(_delta: float) -> bool:
	if not ready:  # the tree is ready now: the empty phase runs no mover
		ready = true
		for body in bodies:
			body.set_physics_process(false)
	var now := Time.get_ticks_usec()
	var phase: String = phases[phase_at]
	if last_usec > 0 and frame_in_phase > WARMUP:
		intervals[phase].append((now - last_usec) / 1000.0)
	last_usec = now
	frame_in_phase += 1
	if frame_in_phase == WARMUP + 1:
		cpu_start = Senses.cpu_seconds()
	if frame_in_phase <= WARMUP + frames:
		return false
	cpu_ms[phase] = (Senses.cpu_seconds() - cpu_start) * 1000.0 / frames
	processing[phase] = bodies.filter(func(body: Node) -> bool: return body.is_physics_processing()).size()
	frame_in_phase = 0
	phase_at += 1
	if phase_at == phases.size():
		print(JSON.stringify({"npcs": npcs, "intervals": intervals, "cpu_ms": cpu_ms, "processing": processing}))
		return true
	if phases[phase_at] == "gdscript":
		for body in bodies:
			body.set_physics_process(true)
	else:
		_add_actions()
	return false
