extends Node2D
## The market square: guards patrol, a thief steals and hides behind a tree, passers-by throw
## stones, and a grenade interrupts a guard who is waiting for the LLM.
##
## The same scene plays a scripted scenario in both modes. With a window the player can also walk
## (WASD), steal at a stall (E), throw a stone (Space) or a grenade (G) at the mouse. With
## `--headless` it prints a JSON-lines timeline and a summary, writes the forgetting plot and quits:
##   godot --headless --fixed-fps 30 --path . -- --out=out
## The stories it checks (exit code 0 when all hold, whatever LLM tier occurred):
##   thief: after a theft and 90 s hidden, the guard still pursues or searches, never greets;
##   stone: a thrown stone is forgotten within about 10 s;
##   grenade: a guard whose LLM request is pending reacts in the same frame; the late answer is discarded.

const PersonScript := preload("res://demo_scene/person.gd")
const Stories := preload("res://demo_scene/stories.gd")
const ForgettingPlot := preload("res://demo_scene/forgetting_plot.gd")
const STALLS := {"bread": Vector2(420, 260), "fruit": Vector2(860, 260), "cloth": Vector2(640, 470)}
const TREES := [Vector2(150, 600), Vector2(1130, 110), Vector2(1150, 620), Vector2(640, 110)]
const TREE_RADIUS := 34.0
const STONE_HEARD := 140.0  # px a landing stone carries
const GRENADE_HEARD := 180.0
const SAMPLE_EVERY := 1.0
const SCENARIO_END := 112.0

var people: Array[Node2D] = []
var guards: Array[Node2D] = []
var headless := DisplayServer.get_name() == "headless"
var out_dir := "res://out"
var timeline: Array[Dictionary] = []  # every JSON line, for the summary and the plot
var _names := {}  # instance id -> display name
var _projectiles: Array[Dictionary] = []
var _next_sample := 0.0
var _script_step := 0
var _player: Node2D
var _frame := 0
var _grenade_due := INF
var _grenade_witnesses := {}  ## guard -> what it was doing when a grenade went off, until it reacts
var _screenshot_path := ""  ## --screenshot=PATH: save one rendered frame at --screenshot-at seconds, then quit
var _screenshot_at := 8.0
var _scripted_only := false  ## --scripted: no player, the scenario alone (recordings)
## --realtime: pace fixed-step frames to the wall clock. `--fixed-fps` (needed for determinism)
## turns off the engine's own pacing, and the LLM's latency is wall-clock time.
## --pace=N: the same, N game seconds per wall-clock second (tests: the story in a quarter of the time,
## with model latency still real time).
var _realtime := false
var _pace_factor := 1.0
var _paced_seconds := 0.0
var _paced_start_usec := 0

@onready var aldric: Node2D = $Aldric
@onready var bertha: Node2D = $Bertha


func _ready() -> void:
	for argument in OS.get_cmdline_user_args():
		if argument.begins_with("--out="):
			out_dir = argument.trim_prefix("--out=")
		elif argument.begins_with("--screenshot="):
			_screenshot_path = argument.trim_prefix("--screenshot=")
		elif argument == "--scripted":
			_scripted_only = true
		elif argument == "--realtime":
			_realtime = true
			_paced_start_usec = Time.get_ticks_usec()
		elif argument.begins_with("--pace="):
			_realtime = true
			_paced_start_usec = Time.get_ticks_usec()
			_pace_factor = maxf(0.01, argument.trim_prefix("--pace=").to_float())
		elif argument.begins_with("--screenshot-at="):
			_screenshot_at = argument.trim_prefix("--screenshot-at=").to_float()
	_plant_trees()
	for guard: Node2D in [aldric, bertha]:
		guards.append(guard)
		_names[guard.get_instance_id()] = guard.display_name
		_watch(guard)
	_add_person("Tam", PersonScript.Role.THIEF, Vector2(80, 240))
	_add_person("Mira", PersonScript.Role.PASSERBY, Vector2(200, 120))
	_add_person("Pip", PersonScript.Role.PASSERBY, Vector2(1240, 560))
	_add_person("Grim", PersonScript.Role.PASSERBY, Vector2(700, 700))
	if not headless and not _scripted_only:
		_player = _add_person("you", PersonScript.Role.PLAYER, Vector2(640, 620))
	log_event({"event": "start", "clock": NpcMindServer.clock, "llm": _llm_configured()})


func _add_person(display_name: String, role: int, at: Vector2) -> Node2D:
	var person: Node2D = PersonScript.new()
	person.display_name = display_name
	person.role = role
	person.position = at
	person.name = display_name
	add_child(person)
	people.append(person)
	_names[person.get_instance_id()] = display_name
	return person


func person(display_name: String) -> Node2D:
	return get_node(display_name)


func name_of(entity_id: int) -> String:
	return _names.get(entity_id, str(entity_id))


func now() -> float:
	return NpcMindServer.now()


func _plant_trees() -> void:
	## The trees block the guards' sight (physics layer 1, their sights' occluder_mask).
	for at: Vector2 in TREES:
		var tree := StaticBody2D.new()
		var shape := CollisionShape2D.new()
		shape.shape = CircleShape2D.new()
		shape.shape.radius = TREE_RADIUS
		tree.position = at
		tree.add_child(shape)
		add_child(tree)


func _watch(guard: Node2D) -> void:
	## The timeline: what the guard's nodes tell, through their signals only.
	var memory: Node = guard.memory
	memory.memory_formed.connect(_on_memory_signal.bind(guard, "memory_formed"))
	memory.memory_forgotten.connect(_on_memory_signal.bind(guard, "memory_forgotten"))
	memory.memory_evicted.connect(_on_memory_signal.bind(guard, "memory_evicted"))
	for sight: Node in guard.sights:
		sight.recalled.connect(func(entity: int, type: int, r: float) -> void:
			log_event({"event": "recall", "guard": guard.display_name, "entity": name_of(entity),
				"type": guard.TYPE_NAMES[type], "R": snappedf(r, 0.001)}))
	guard.selector.behavior_entered.connect(_on_behavior_entered.bind(guard))
	guard.decision.decision_requested.connect(func(situation: String) -> void:
		log_event({"event": "ask", "guard": guard.display_name, "situation": situation}))
	guard.decision.decision_made.connect(func(chosen: StringName, _urgency: float, tier: int) -> void:
		log_event({"event": "decision", "guard": guard.display_name, "intent": String(chosen), "tier": tier}))
	guard.decision.decision_fallback.connect(func(tier: int, reason: String) -> void:
		log_event({"event": "fallback", "guard": guard.display_name, "tier": tier, "reason": reason}))
	guard.decision.decision_aborted.connect(func() -> void:
		log_event({"event": "abort", "guard": guard.display_name, "behavior": String(guard.selector.choice)}))


func _on_behavior_entered(chosen: StringName, guard: Node2D) -> void:
	if _grenade_witnesses.has(guard):  # its reaction to the grenade
		var was: Dictionary = _grenade_witnesses[guard]
		_grenade_witnesses.erase(guard)
		log_event({"event": "grenade", "guard": guard.display_name, "pending": was.pending,
			"in_flight": was.in_flight, "behavior": String(chosen)})


func _process(delta: float) -> void:
	_frame += 1
	_run_script()
	if _player != null:
		_player_input()
	for someone in people:
		someone.step(delta)
	_fly_projectiles()
	if now() >= _next_sample:
		_next_sample += SAMPLE_EVERY
		_sample()
	if _screenshot_path != "" and now() >= _screenshot_at:
		_take_screenshot()
	if now() >= SCENARIO_END and _script_step >= 0:
		_script_step = -1
		_finish()
	queue_redraw()
	if _realtime:
		_pace(delta)


func _pace(delta: float) -> void:
	_paced_seconds += delta / _pace_factor
	var ahead := _paced_start_usec + int(_paced_seconds * 1e6) - Time.get_ticks_usec()
	if ahead > 0:
		OS.delay_usec(ahead)


# The scripted scenario, in server-clock seconds. Deterministic under --fixed-fps.
func _run_script() -> void:
	var t := now()
	var tam := person("Tam")
	match _script_step:
		0:
			tam.walk_to(STALLS.bread + Vector2(0, 40))
			person("Mira").walk_to(Vector2(470, 380))  # passes Aldric: a friendly greeting
			person("Pip").walk_to(Vector2(930, 420))
			_script_step += 1
		1:
			if t >= 6.0 and tam.arrived():
				tam.stealing = true
				log_event({"event": "theft", "thief": "Tam", "stall": "bread"})
				_script_step += 1
		2:
			if t >= 7.0:
				tam.stealing = false
				tam.speed = 170.0
				tam.walk_to(TREES[0] + Vector2(-30, 10))
				_script_step += 1
		3:
			if tam.arrived():
				tam.concealed = true
				log_event({"event": "hide", "who": "Tam", "behind": "tree"})
				_script_step += 1
		4:
			if t >= 14.0:
				throw("stone", person("Pip"), bertha.position + Vector2(12, 6))
				_script_step += 1
		5:
			if t >= 15.0:
				person("Pip").walk_to(Vector2(1400, 760))  # leaves the square
				person("Grim").walk_to(Vector2(820, 560))
				_script_step += 1
		6:
			if t >= 45.0:
				# A stone as a distraction: puzzled, Bertha asks the LLM what to make of it. The grenade
				# lands while that request is pending: once it is in flight to the model, or at once
				# when there is no model (its fallback is then owed in the grenade's frame).
				stone_lands(person("Grim"), bertha.position + Vector2(10, 4))
				_grenade_due = t + 30.0
				_script_step += 1
		7:
			if bertha.pending() and (bertha.in_flight or not _llm_configured()) or t >= _grenade_due:
				_grenade_at_bertha()
			elif not bertha.pending() and bertha.behavior != &"puzzled":
				# answered before the grenade could cut it off (a slow frame): another stone, so she
				# is puzzled and asks again
				stone_lands(person("Grim"), bertha.position + Vector2(10, 4))
		8:
			if t >= 7.0 + 90.0 + 2.0:
				tam.walk_to(Vector2(560, 660))  # out from behind the tree, past the guard
				log_event({"event": "emerge", "who": "Tam", "hidden_for": snappedf(t - 9.0, 0.1)})
				_script_step += 1


func _take_screenshot() -> void:
	var path := _screenshot_path
	_screenshot_path = ""
	if headless:  # no image without a renderer
		push_error("--screenshot needs a display (run under xvfb-run), not --headless")
		get_tree().quit(2)
		return
	await RenderingServer.frame_post_draw
	var image := get_viewport().get_texture().get_image()
	var error := image.save_png(path)
	log_event({"event": "screenshot", "path": path, "size": [image.get_width(), image.get_height()], "error": error})
	get_tree().quit(0 if error == OK else 3)


func _grenade_at_bertha() -> void:
	explode_grenade(person("Grim"), bertha.position + Vector2(30, 20))
	person("Grim").walk_to(Vector2(700, 800))
	_script_step = 8


func _llm_configured() -> bool:
	return OS.get_environment("NPC_MIND_LLM_URL") != "" or str(ProjectSettings.get_setting("npc_mind/llm/endpoint", "")) != ""


func throw(kind: String, thrower: Node2D, to: Vector2) -> void:
	_projectiles.append({"kind": kind, "thrower": thrower, "from": thrower.position, "to": to,
		"start": now(), "land": now() + 0.6})
	log_event({"event": "throw", "kind": kind, "who": thrower.display_name})


func _fly_projectiles() -> void:
	for projectile: Dictionary in _projectiles.duplicate():
		if now() < projectile.land:
			continue
		_projectiles.erase(projectile)
		if projectile.kind == "stone":
			stone_lands(projectile.thrower, projectile.to)
			log_event({"event": "stone_landed", "who": projectile.thrower.display_name})
		else:
			explode_grenade(projectile.thrower, projectile.to)


func stone_lands(thrower: Node2D, at: Vector2) -> void:
	## A sound: every hearing sense in range records it (trivia, quieter with distance).
	NpcMindServer.emit_stimulus(at, STONE_HEARD, MemoryStream.TRIVIA, 0.15, thrower)


func explode_grenade(thrower: Node2D, at: Vector2) -> void:
	NpcMindServer.emit_stimulus(at, GRENADE_HEARD, MemoryStream.TRAUMA, 1.0, thrower)
	log_event({"event": "grenade_exploded", "who": thrower.display_name})
	for guard in guards:  # the timeline notes what each guard in earshot was doing, until it reacts
		if guard.position.distance_to(at) < GRENADE_HEARD:
			_grenade_witnesses[guard] = {"pending": guard.pending(), "in_flight": guard.in_flight}


func _player_input() -> void:
	_player.stealing = false
	if Input.is_physical_key_pressed(KEY_E):
		for stall: Vector2 in STALLS.values():
			if _player.position.distance_to(stall) < 60.0:
				_player.stealing = true
	if Input.is_action_just_pressed("ui_accept"):
		throw("stone", _player, get_global_mouse_position())
	if Input.is_physical_key_pressed(KEY_G) and _projectiles.is_empty():
		throw("grenade", _player, get_global_mouse_position())


func _on_memory_signal(entity_id: int, memory_type: int, guard: Node2D, what: String) -> void:
	log_event({"event": what, "guard": guard.display_name, "entity": name_of(entity_id),
		"type": guard.TYPE_NAMES[memory_type]})


func log_event(fields: Dictionary) -> void:
	var line := {"t": snappedf(now(), 0.001), "frame": _frame}
	line.merge(fields)
	timeline.append(line)
	print(JSON.stringify(line))


func _sample() -> void:
	for guard in guards:  # awareness: of the guard's target (its selector's "threat" input)
		var memories: Array = guard.memory.get_memories()
		var aware: String = guard.AWARENESS_NAMES[guard.awareness()]
		if memories.is_empty():
			log_event({"event": "sample", "guard": guard.display_name, "entity": null, "type": null, "R": 0.0,
				"awareness": aware, "behavior": String(guard.behavior), "tier": guard.tier})
		for entry: Dictionary in memories:
			log_event({"event": "sample", "guard": guard.display_name, "entity": name_of(entry.entity_id),
				"type": guard.TYPE_NAMES[entry.memory_type], "R": snappedf(entry.retrievability, 0.0001),
				"awareness": aware, "behavior": String(guard.behavior), "tier": guard.tier})


func _finish() -> void:
	var stories := Stories.check(timeline)
	var held := true
	for story: String in stories:
		held = held and stories[story].held
		log_event({"event": "story", "story": story, "held": stories[story].held, "detail": stories[story].detail})
	var metrics := {}
	for monitor_name: String in NpcMindServer.get_monitor_names():
		metrics[monitor_name] = NpcMindServer.get_monitor(monitor_name)
	log_event({"event": "summary", "all_stories_held": held, "metrics": metrics})
	print("")
	print("== npc_mind market square: summary")
	for story: String in stories:
		print("  %-8s %s  %s" % [story, "held" if stories[story].held else "FAILED", stories[story].detail])
	print("  LLM: %s" % JSON.stringify(metrics))
	DirAccess.make_dir_recursive_absolute(out_dir)
	# Outputs are not assets: keep the editor from importing them when out_dir is inside the project.
	FileAccess.open(out_dir.path_join(".gdignore"), FileAccess.WRITE)
	var plot_path := out_dir.path_join("forgetting.png")
	ForgettingPlot.draw(timeline).save_png(plot_path)
	print("  forgetting plot: %s" % plot_path)
	if headless:
		get_tree().quit(0 if held else 1)


func _draw() -> void:
	draw_rect(Rect2(0, 0, 1280, 720), Color(0.86, 0.8, 0.66))
	draw_rect(Rect2(60, 60, 1160, 600), Color(0.8, 0.73, 0.58), false, 4.0)
	for stall: String in STALLS:
		var at: Vector2 = STALLS[stall]
		draw_rect(Rect2(at - Vector2(40, 22), Vector2(80, 44)), Color(0.55, 0.35, 0.2))
		draw_rect(Rect2(at - Vector2(44, 30), Vector2(88, 14)), Color(0.85, 0.25, 0.3))
		draw_string(ThemeDB.fallback_font, at + Vector2(-18, 8), stall, HORIZONTAL_ALIGNMENT_LEFT, -1, 13, Color.WHITE)
	for tree: Vector2 in TREES:
		draw_circle(tree, TREE_RADIUS, Color(0.18, 0.5, 0.2))
		draw_circle(tree + Vector2(-8, -8), TREE_RADIUS * 0.55, Color(0.25, 0.62, 0.28))
	for projectile: Dictionary in _projectiles:
		var progress := clampf((now() - projectile.start) / (projectile.land - projectile.start), 0.0, 1.0)
		var at: Vector2 = projectile.from.lerp(projectile.to, progress)
		draw_circle(at, 5.0 if projectile.kind == "stone" else 8.0, Color(0.3, 0.3, 0.3) if projectile.kind == "stone" else Color(0.1, 0.4, 0.1))
	var legend := Vector2(70, 30)
	draw_string(ThemeDB.fallback_font, legend, "npc_mind: bars above each guard are memories, length = R = e^(-t/S)", HORIZONTAL_ALIGNMENT_LEFT, -1, 14, Color(0.2, 0.2, 0.2))
	for index in 5:
		var at := legend + Vector2(520 + index * 110, -10)
		draw_rect(Rect2(at, Vector2(14, 10)), aldric.TYPE_COLOURS[index])
		draw_string(ThemeDB.fallback_font, at + Vector2(18, 10), aldric.TYPE_NAMES[index], HORIZONTAL_ALIGNMENT_LEFT, -1, 12, Color(0.2, 0.2, 0.2))
	draw_string(ThemeDB.fallback_font, Vector2(70, 690), "t = %.1f s   (npc_mind demo: WASD walk, E steal, Space stone, G grenade)" % now(), HORIZONTAL_ALIGNMENT_LEFT, -1, 14, Color(0.2, 0.2, 0.2))
