extends SceneTree
## The physics pass of actions, batched (run with --fixed-fps 60): an on_tick run of
## SetPropertyActions is written before the CallMethodAction after it (in order, though the sets
## go to the engine together); many NPCs, some in 2D and some in 3D, each reach their own marker
## in one pass; a body freed in the middle of its move ends the move silently while the others go
## on; a waypoint freed mid-move stops its body's move with one error naming it.
## One JSON line per check.

const B = preload("res://tests/addon/utility_builders.gd")
const WALKERS := 12

var frame := 0
var world: Node2D
var counter: Node
var walkers: Array[CharacterBody2D] = []
var goals: Array[Marker2D] = []
var walkers3d: Array[CharacterBody3D] = []
var goals3d: Array[Marker3D] = []
var doomed: CharacterBody2D
var chaser: CharacterBody2D
var tuned: CharacterBody2D  # its move's speed is changed while it moves
var tuned_move: Resource
var marks := {}


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func npc(body: Node, enter: Array, tick: Array) -> Node:
	var go: Resource = B.behavior("go", [B.consideration("go")])
	go.on_enter = B.actions(enter)
	go.on_tick = B.actions(tick)
	var selector: Node = B.selector([go])
	selector.name = "Mind"
	body.add_child(selector)
	return selector


func _initialize() -> void:
	world = Node2D.new()
	world.name = "World"
	root.add_child(world)
	var keeper := CharacterBody2D.new()
	world.add_child(keeper)
	var counting := GDScript.new()
	counting.source_code = "extends Node\nvar level := 0\nvar a := 0\nvar seen := []\nfunc tick() -> void:\n\tseen.append([level, a])\n"
	counting.reload()
	counter = Node.new()
	counter.name = "Counter"
	counter.set_script(counting)
	keeper.add_child(counter)
	npc(keeper, [], [
		B.resource("SetPropertyAction", {"node": NodePath("../Counter"), "property": &"level", "value": 4}),
		B.resource("SetPropertyAction", {"node": NodePath("../Counter"), "property": &"a", "value": 9}),
		B.resource("CallMethodAction", {"node": NodePath("../Counter"), "method": &"tick"}),
		B.resource("SetPropertyAction", {"node": NodePath("../Counter"), "property": &"level", "value": 5}),
	]).evaluate({"go": 1.0})
	for i in WALKERS:
		var goal := Marker2D.new()
		goal.name = "Goal%d" % i
		goal.position = Vector2(10.0 * i, 40.0)
		world.add_child(goal)
		goals.append(goal)
		var walker := CharacterBody2D.new()
		walker.position = Vector2(-5.0 * i, 0.0)
		world.add_child(walker)
		walkers.append(walker)
		npc(walker, [B.resource("MoveAction", {"node": NodePath("../../Goal%d" % i), "speed": 100.0, "arrive_distance": 2.0})],
			[]).evaluate({"go": 1.0})
	var space := Node3D.new()
	space.name = "Space"
	root.add_child(space)
	for i in 3:
		var goal := Marker3D.new()
		goal.name = "Goal%d" % i
		goal.position = Vector3(2.0 * i, 0.0, 3.0)
		space.add_child(goal)
		goals3d.append(goal)
		var walker := CharacterBody3D.new()
		walker.position = Vector3(-1.0, 0.0, -1.0 * i)
		space.add_child(walker)
		walkers3d.append(walker)
		npc(walker, [B.resource("MoveAction", {"node": NodePath("../../Goal%d" % i), "speed": 6.0, "arrive_distance": 0.05})],
			[]).evaluate({"go": 1.0})
	var far := Marker2D.new()
	far.name = "Far"
	far.position = Vector2(5000, 0)
	world.add_child(far)
	doomed = CharacterBody2D.new()
	world.add_child(doomed)
	var doomed_mind := npc(doomed, [B.resource("MoveAction", {"body": NodePath("../Body"), "node": NodePath("../../Far"), "speed": 300.0})], [])
	var body := CharacterBody2D.new()  # the doomed NPC moves a body of its own, freed apart from it
	body.name = "Body"
	doomed.add_child(body)
	doomed_mind.evaluate({"go": 1.0})
	chaser = CharacterBody2D.new()
	chaser.name = "Chaser"
	world.add_child(chaser)
	npc(chaser, [B.resource("MoveAction", {"node": NodePath("../../Far"), "speed": 300.0})], []).evaluate({"go": 1.0})
	var away := Marker2D.new()
	away.name = "Away"
	away.position = Vector2(-5000, 300)
	world.add_child(away)
	tuned = CharacterBody2D.new()
	tuned.position = Vector2(0, 300)
	world.add_child(tuned)
	tuned_move = B.resource("MoveAction", {"node": NodePath("../../Away"), "speed": 60.0})
	npc(tuned, [tuned_move], []).evaluate({"go": 1.0})


func _physics_process(_delta: float) -> bool:
	frame += 1
	if frame == 10:
		doomed.get_node("Body").free()
	if frame == 20:
		marks["chaser_20"] = chaser.global_position
		world.get_node("Far").free()
	if frame == 30:
		marks["chaser_30"] = chaser.global_position
		marks["tuned_30"] = tuned.velocity.length()
		tuned_move.speed = 240.0  # (as the inspector or a script sets it, mid-move)
	if frame == 40:
		marks["tuned_40"] = tuned.velocity.length()
	if frame == 150:
		report()
		print(JSON.stringify({"done": true}))
		return true
	return false


func report() -> void:
	check("a run of on_tick sets is written before the call after it, in order", counter.seen.size() >= 30
		and counter.seen.slice(1).all(func(entry: Array) -> bool: return entry == [4, 9]) and counter.level == 5,
		[counter.seen.slice(0, 3), counter.level])
	var misses := []
	for i in WALKERS:
		if walkers[i].global_position.distance_to(goals[i].global_position) > 2.0 or walkers[i].velocity != Vector2.ZERO:
			misses.append([i, walkers[i].global_position, walkers[i].velocity])
	check("every 2D walker reached its own marker and stopped", misses.is_empty(), misses)
	var misses3d := []
	for i in 3:
		var at := walkers3d[i].global_position
		if Vector2(at.x, at.z).distance_to(Vector2(goals3d[i].position.x, goals3d[i].position.z)) > 0.05:
			misses3d.append([i, at])
	check("every 3D walker reached its own marker", misses3d.is_empty(), misses3d)
	check("a body freed mid-move ended its move (one mistake in all: the chaser's)",
		NpcMindServer.get_metrics()["mistakes/reported"] == 1.0, NpcMindServer.get_metrics()["mistakes/reported"])
	check("a move's speed set while it moves is its speed from the next frame on",
		is_equal_approx(marks["tuned_30"], 60.0) and is_equal_approx(marks["tuned_40"], 240.0),
		[marks["tuned_30"], marks["tuned_40"]])
	check("a freed waypoint stops its body's move", marks["chaser_20"].x > 0.0
		and marks["chaser_30"].distance_to(marks["chaser_20"]) <= 300.0 / 60.0 + 0.01
		and chaser.global_position == marks["chaser_30"] and chaser.velocity == Vector2.ZERO,
		[marks["chaser_20"], marks["chaser_30"], chaser.global_position, chaser.velocity])
