extends SceneTree
## Drives tests/test_debugger_feed.py's senses and actions checks: one guard, "Aldric" (a
## CharacterBody2D facing +X with a MemoryStream, a SightSense2D "Eyes", a HearingSense2D "Ears" and
## a UtilitySelector whose behaviors run actions), sees Tam (in group "people", stealing), does not
## see Bo (behind a wall) and hears a stone thrown every half second. The selector runs "idle"
## (a property set on enter and every physics frame, on exit a call of a method that does not exist:
## skipped, reported) until the threat passes 0.5, then "attack" (a signal on enter). At PAUSE_AT
## seconds the tree is paused and "test:paused" is sent with the server's clock; the game quits at
## RUN_SECONDS. Prints one JSON line with the ids and positions at the start.
## With `-- --keep-running` it never pauses or quits (the editor screenshot's game).

const Build := preload("res://tests/addon/utility_builders.gd")
const PAUSE_AT := 2.2
const RUN_SECONDS := 3.2
const WALLS := 1
const BODIES := 2
const TAM_AT := Vector2(200, 30)
const BO_AT := Vector2(360, 0)
const STONE_AT := Vector2(100, -50)

var guard: CharacterBody2D
var selector: Node
var stone: Node2D
var started_msec := 0
var thrown_at := -1.0
var paused_sent := false
var keep_running := false


func body(body_name: String, at: Vector2) -> CharacterBody2D:
	var made := CharacterBody2D.new()
	made.name = body_name
	made.position = at
	made.collision_layer = BODIES
	made.collision_mask = 0
	var shape := CollisionShape2D.new()
	var circle := CircleShape2D.new()
	circle.radius = 8.0
	shape.shape = circle
	made.add_child(shape)
	return made


func rule(memory_type: int, salience: float, when: String) -> Resource:
	return Build.resource("SenseRule", {"group": &"people", "memory_type": memory_type, "salience": salience,
		"when": StringName(when)})


func _initialize() -> void:
	keep_running = "--keep-running" in OS.get_cmdline_user_args()
	guard = body("Aldric", Vector2.ZERO)
	guard.add_child(ClassDB.instantiate("MemoryStream"))
	var eyes: Node = ClassDB.instantiate("SightSense2D")
	eyes.name = "Eyes"
	eyes.view_range = 400.0
	eyes.field_of_view = 120.0
	eyes.occluder_mask = WALLS
	eyes.rules = [rule(MemoryStream.OBSERVATION, 0.3, ""), rule(MemoryStream.HOSTILE, 0.9, "is_stealing")]
	guard.add_child(eyes)
	var ears: Node = ClassDB.instantiate("HearingSense2D")
	ears.name = "Ears"
	guard.add_child(ears)
	var idle: Resource = Build.behavior("idle", [Build.consideration("calm")])
	idle.on_enter = Build.actions([Build.resource("SetPropertyAction", {"property": &"modulate:a", "value": 1.0})])
	idle.on_tick = Build.actions([Build.resource("SetPropertyAction", {"property": &"rotation", "value": 0.0})])
	idle.on_exit = Build.actions([Build.resource("CallMethodAction", {"method": &"no_such_method"})])
	var attack: Resource = Build.behavior("attack", [Build.consideration("threat")])
	attack.on_enter = Build.actions([Build.resource("EmitSignalAction", {"signal_name": &"alarm"})])
	selector = Build.selector([idle, attack])
	selector.name = "Selector"
	guard.add_child(selector)
	root.add_child(guard)
	var thief := body("Tam", TAM_AT)
	thief.set_script(_script("extends CharacterBody2D\nvar is_stealing := true\n"))
	thief.add_to_group("people")
	root.add_child(thief)
	var hidden := body("Bo", BO_AT)
	hidden.add_to_group("people")
	root.add_child(hidden)
	var wall := StaticBody2D.new()
	wall.name = "Wall"
	wall.position = Vector2(300, 0)
	wall.collision_layer = WALLS
	var shape := CollisionShape2D.new()
	var rect := RectangleShape2D.new()
	rect.size = Vector2(16, 200)
	shape.shape = rect
	wall.add_child(shape)
	root.add_child(wall)
	stone = Node2D.new()
	stone.name = "Stone"
	stone.position = STONE_AT
	root.add_child(stone)
	print(JSON.stringify({"guard": guard.get_instance_id(), "tam": thief.get_instance_id(),
		"bo": hidden.get_instance_id(), "stone": stone.get_instance_id()}))
	started_msec = Time.get_ticks_msec()


func _script(source: String) -> GDScript:
	var made := GDScript.new()
	made.source_code = source
	made.reload()
	return made


func _process(_delta: float) -> bool:
	var t := (Time.get_ticks_msec() - started_msec) / 1000.0
	if not paused:
		var threat := clampf(t / PAUSE_AT, 0.0, 1.0)
		if keep_running:
			threat = 0.5 + 0.5 * sin(t * 1.5 - 1.0)  # idle, attack, idle... every two seconds
		selector.evaluate({"calm": 1.0 - threat, "threat": threat})
		if t - thrown_at >= 0.5:
			thrown_at = t
			NpcMindServer.emit_stimulus(STONE_AT, 300.0, MemoryStream.HOSTILE, 0.8, stone)
	if keep_running:
		return false
	if t >= PAUSE_AT and not paused_sent:
		paused = true
		paused_sent = true
		EngineDebugger.send_message("test:paused", [NpcMindServer.now()])
	return t >= RUN_SECONDS
