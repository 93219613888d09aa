extends SceneTree
## The game benchmark (run by benchmarks/bench_game.py, never by the tests): a small top-down 2D
## game in the manner of godot-demo-projects' "Dodge the Creeps", written here. A player runs a
## figure eight through an arena with walls; N mobs (CharacterBody2D, sliding against the walls)
## each chase it while they see it, search where they last saw it for a while after, and otherwise
## walk to their own spot. Sight: within SIGHT px and no wall on the ray, checked every physics frame.
##   --mobs=N --frames=F --variants=gdscript,scripted,batched,signalled,threaded,nocode --rounds=R
## Every variant runs in this one engine, in turn, R rounds (the order reversed every other round):
## its mobs are made afresh from the same seed, run WARMUP frames, measured F frames, then freed, so
## the variants compare on the same process, memory layout and machine state.
## gdscript: the logic in plain GDScript, with a hand-made memory (the seconds since seen and the
##   last seen position) in each mob's _physics_process (mob_gdscript.gd).
## scripted: each mob's _physics_process calls MemoryStream.record_event while it sees the player,
##   awareness_of and UtilitySelector.evaluate every physics frame, and moves (mob_scripted.gd).
## batched: the same, but the selector's batched path: set_input of the awareness, and get_choice(),
##   the choice made by the server at the end of the frame before (mob_batched.gd).
## signalled: the mob's script only records the player while it sees it and moves; its selector
##   chooses by itself from sourced inputs (its target from memory) and sets the mob's behavior
##   through behavior_changed (mob_signalled.gd).
## threaded: the signalled mobs, with the server's update on its thread (NpcMindServer.update_on_thread):
##   their behavior_changed comes one frame later.
## nocode: no script on the mob: a SightSense2D (rate 60 Hz) records the player, the
##   UtilitySelector's target comes from memory, its inputs are sourced (AwarenessInput,
##   BlackboardInput) and each behavior's MoveAction moves the body.
## Runs with --fixed-fps 60 (one physics step a frame, as fast as the engine goes, headless) and
## prints one JSON line per run (a variant in a round): the frame intervals (ms) after its warm-up,
## and the behaviors the mobs hold at its end.

const ARENA := Vector2(1600, 1000)
const SIGHT := 300.0
const CHASE_SPEED := 150.0
const SEARCH_SPEED := 90.0
const WANDER_SPEED := 60.0
const WARMUP := 60
const GdMob = preload("res://benchmarks/game/mob_gdscript.gd")
const ScriptedMob = preload("res://benchmarks/game/mob_scripted.gd")
const BatchedMob = preload("res://benchmarks/game/mob_batched.gd")
const SignalledMob = preload("res://benchmarks/game/mob_signalled.gd")

var mobs := 200
var frames := 600
var variants: PackedStringArray = ["gdscript"]
var rounds := 1
var variant := "gdscript"
var runs: Array = []  # [round, variant] in the order they run
var world: Node2D
var player: Node2D
var mob_nodes: Array[CharacterBody2D] = []
var frame := 0
var last_usec := 0
var intervals: Array[float] = []
# The server's main-thread time by part (its server/<part>_ms metrics, the frame before's), sampled
# every PART_EVERY measured frames in every variant; the interval after a sample is left out of
# `intervals` (the read itself costs), in every variant alike.
const PART_EVERY := 10
const PARTS := ["frame", "senses", "fold", "inputs", "choose", "decide", "memory", "signals", "update_wait"]
var parts := {}
var sampled := false
var rng := RandomNumberGenerator.new()
var plain_behaviors: Array[UtilityBehavior] = []  # the scripted mobs' (shared, as one scene's)
var sourced_behaviors: Array[UtilityBehavior] = []  # the no-code mobs'
var signalled_behaviors: Array[UtilityBehavior] = []  # the signalled mobs' (sourced, no actions)
var current_round := 0
var binding_at_start := {}  # the binding's counts of calls taken in C, at the run's first measured frame


func _initialize() -> void:
	for argument in OS.get_cmdline_user_args():
		var parts := argument.trim_prefix("--").split("=")
		match parts[0]:
			"mobs": mobs = parts[1].to_int()
			"frames": frames = parts[1].to_int()
			"variants": variants = parts[1].split(",")
			"rounds": rounds = parts[1].to_int()
	for round in rounds:
		var order := variants.duplicate()
		if round % 2 == 1:
			order.reverse()
		for name in order:
			runs.append([round, name])
	world = Node2D.new()
	world.name = "Arena"
	root.add_child(world)
	for wall_rect: Rect2 in [Rect2(300, 200, 40, 300), Rect2(900, 100, 300, 40), Rect2(1200, 500, 40, 350),
			Rect2(500, 700, 400, 40), Rect2(700, 350, 120, 120)]:
		var wall := StaticBody2D.new()  # layer 1: blocks sight and bodies
		var shape := CollisionShape2D.new()
		var box := RectangleShape2D.new()
		box.size = wall_rect.size
		shape.shape = box
		wall.position = wall_rect.get_center()
		wall.add_child(shape)
		world.add_child(wall)
	player = Node2D.new()
	player.name = "Player"
	player.add_to_group(&"player")
	world.add_child(player)
	_start(runs.pop_front())


func _start(run: Array) -> void:
	## The next run: its variant's mobs, made from the same seed as every run's.
	current_round = run[0]
	variant = run[1]
	rng.seed = 11
	frame = 0
	intervals = []
	sampled = false
	parts = {}
	for part: String in PARTS:
		parts[part] = []
	player.position = Vector2.ZERO  # where the player starts, before its first move
	NpcMindServer.update_on_thread = variant == "threaded"
	for i in mobs:
		var mob := _make_mob(i)
		mob.position = Vector2(rng.randf() * ARENA.x, rng.randf() * ARENA.y)
		world.add_child(mob)
		mob_nodes.append(mob)


func _player_at(at: int) -> Vector2:
	var t := at / 60.0
	return ARENA / 2.0 + Vector2(sin(t * 0.35) * 650.0, sin(t * 0.7) * 380.0)  # a figure eight


func _make_mob(i: int) -> CharacterBody2D:
	var spot := Vector2(rng.randf() * ARENA.x, rng.randf() * ARENA.y)
	var mob := CharacterBody2D.new()
	mob.name = "Mob%d" % i
	mob.collision_layer = 2
	mob.collision_mask = 1
	var shape := CollisionShape2D.new()
	var circle := CircleShape2D.new()
	circle.radius = 8.0
	shape.shape = circle
	mob.add_child(shape)
	if variant == "gdscript":
		mob.set_script(GdMob)
		mob.setup(player, spot)
		return mob
	var memory: Node = ClassDB.instantiate("MemoryStream")
	memory.name = "Memory"
	mob.add_child(memory)
	var selector: Node = ClassDB.instantiate("UtilitySelector")
	selector.name = "Selector"
	if variant in ["scripted", "batched"]:
		if plain_behaviors.is_empty():
			plain_behaviors = _behaviors(false)
		selector.behaviors = plain_behaviors
		mob.add_child(selector)
		mob.set_script(ScriptedMob if variant == "scripted" else BatchedMob)
		mob.setup(player, spot)
		return mob
	if variant in ["signalled", "threaded"]:
		if signalled_behaviors.is_empty():
			signalled_behaviors = _behaviors(true, false)
		_choose_by_itself(selector, signalled_behaviors)
		mob.add_child(selector)
		mob.set_script(SignalledMob)
		mob.setup(player, spot)
		return mob
	var marker := Marker2D.new()  # the mob's own spot, in world coordinates
	marker.name = "Spot"
	marker.top_level = true
	marker.position = spot
	mob.add_child(marker)
	var sight: Node = ClassDB.instantiate("SightSense2D")
	var rule: Resource = ClassDB.instantiate("SenseRule")
	rule.group = &"player"
	rule.memory_type = MemoryStream.OBSERVATION
	rule.salience = 0.5
	var rules: Array[SenseRule] = [rule]
	sight.rules = rules
	sight.view_range = SIGHT
	sight.field_of_view = 360.0
	sight.rate_hz = 60.0
	sight.record_interval = 0.0
	mob.add_child(sight)
	if sourced_behaviors.is_empty():
		sourced_behaviors = _behaviors(true)
	_choose_by_itself(selector, sourced_behaviors)
	mob.add_child(selector)
	return mob


func _choose_by_itself(selector: Node, behaviors: Array[UtilityBehavior]) -> void:
	## A selector of sourced behaviors: its target from memory, its calm on the blackboard.
	selector.behaviors = behaviors
	selector.target_from = "memory"
	selector.blackboard = {"calm": 0.2}


func _behaviors(sourced: bool, acting := true) -> Array[UtilityBehavior]:
	## chase at pursue, search at puzzled or search, wander otherwise (calm 0.2 beats nothing). Every
	## mob shares them, as the instances of one mob scene share its resources.
	var made: Array[UtilityBehavior] = []
	for spec: Array in [["chase", 0.9, 1.0, CHASE_SPEED], ["search", 0.3, 0.8, SEARCH_SPEED], ["wander", 0.0, 1.0, WANDER_SPEED]]:
		var behavior: Resource = ClassDB.instantiate("UtilityBehavior")
		behavior.name = StringName(spec[0])
		behavior.weight = spec[2]
		var consideration: Resource = ClassDB.instantiate("UtilityConsideration")
		if spec[0] == "wander":
			consideration.input_key = &"calm"
			if sourced:
				var calm: Resource = ClassDB.instantiate("BlackboardInput")
				calm.key = &"calm"
				consideration.source = calm
		else:
			consideration.input_key = &"awareness"
			consideration.use_input_range = true
			consideration.input_max = 3.0
			consideration.veto_below = spec[1]
			if sourced:
				consideration.source = ClassDB.instantiate("AwarenessInput")
		var considerations: Array[UtilityConsideration] = [consideration]
		behavior.considerations = considerations
		if sourced and acting:
			var move: Resource = ClassDB.instantiate("MoveAction")
			move.speed = spec[3]
			move.arrive_distance = 4.0
			if spec[0] == "wander":
				move.destination = "node"
				move.node = NodePath("../Spot")
			else:
				move.destination = "target"
			var actions: Array[MindAction] = [move]
			behavior.on_enter = actions
		made.append(behavior)
	return made


func _process(_delta: float) -> bool:
	var now := Time.get_ticks_usec()
	if frame > WARMUP:
		if not sampled:
			intervals.append((now - last_usec) / 1000.0)
		sampled = false
		if frame % PART_EVERY == 0:
			var metrics: Dictionary = NpcMindServer.get_metrics()
			for part: String in PARTS:
				parts[part].append(metrics["server/%s_ms" % part])
			sampled = true
	elif frame == WARMUP:
		binding_at_start = _binding_counts()
	last_usec = now
	frame += 1
	player.position = _player_at(frame)
	if frame <= WARMUP + frames:
		return false
	var held := {}
	for mob in mob_nodes:
		var behavior := String(mob.get_node("Selector").choice) if variant == "nocode" else String(mob.behavior)
		held[behavior] = held.get(behavior, 0) + 1
	var binding := _binding_counts()
	for name: String in binding:
		binding[name] -= binding_at_start[name]
	print(JSON.stringify({"variant": variant, "round": current_round, "mobs": mobs, "intervals": intervals,
		"behaviors": held, "binding": binding, "parts": parts}))
	for mob in mob_nodes:
		mob.free()
	mob_nodes.clear()
	if runs.is_empty():
		return true
	_start(runs.pop_front())
	return false


func _binding_counts() -> Dictionary:
	## The calls the binding took in C since start: queued, answered, and answered by the kernel's check.
	var metrics: Dictionary = NpcMindServer.get_metrics()
	var counts := {}
	for name: String in ["queued_calls", "answered_calls", "checked_calls", "thread_frames", "rested_frames"]:
		counts[name] = metrics["binding/" + name]
	return counts
