extends Node
## The test's observer (tests/test_designer_walkthrough.py), an autoload the test adds to the
## designer's project: the level itself has no script. It only watches what a player would see
## (where the guard goes, its mark, its animation) and what the NpcMind debugger shows (memories,
## choices, warnings), then prints one JSON line per check and quits. `-- --shot=PATH --shot-at=S`
## saves a rendered frame instead.

const END := 18.0
const HOSTILE := 3
const TRIVIA := 0

var time := 0.0
var entered: Array = []
var marks: Array = []
var alerted := false
var most_hostile_r := 0.0
var heard := false
var closest_to_last_seen := INF
var last_seen_while_hidden: Variant = null
var failed := false
var shot := ""
var shot_at := 3.0
var level: Node
var guard: CharacterBody3D
var player: Node3D


func _ready() -> void:
	for argument in OS.get_cmdline_user_args():
		if argument.begins_with("--shot="):
			shot = argument.trim_prefix("--shot=")
		elif argument.begins_with("--shot-at="):
			shot_at = argument.trim_prefix("--shot-at=").to_float()
	process_physics_priority = 100
	await get_tree().process_frame
	level = get_tree().current_scene
	guard = level.get_node("Guard")
	player = level.get_node("Player")
	var warnings := {}
	for node in guard.get_children():
		var found := NpcMindDesigner.get_configuration_warnings(node)
		if not found.is_empty():
			warnings[str(node.name)] = found
	check("no configuration warnings on the mind's nodes", warnings.is_empty(), warnings)
	var chase: Resource = guard.get_node("Mind").behaviors[0]
	var labels: Array = chase.on_enter.map(func(action: Resource) -> String: return action.resource_name)
	check("the inspector lists the actions by what they do", labels == ["SetPropertyAction text", "PlayAnimationAction alert", "MoveAction target"], labels)


func check(name: String, ok: bool, detail: Variant = null) -> void:
	failed = failed or not ok
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func _physics_process(delta: float) -> void:
	if guard == null:
		return
	time += delta
	var memory: Node = guard.get_node("Memory")
	var id := player.get_instance_id()
	for m: Dictionary in memory.get_memories():
		if m["entity_id"] == id and m["memory_type"] == HOSTILE:
			most_hostile_r = maxf(most_hostile_r, m["retrievability"])
		if m["entity_id"] == id and m["memory_type"] == TRIVIA:
			heard = true
	var choice := String(guard.get_node("Mind").choice)
	if choice != "" and (entered.is_empty() or entered[-1][0] != choice):
		entered.append([choice, snappedf(time, 0.01)])
	var text: String = guard.get_node("Mark").text
	if marks.is_empty() or marks[-1] != text:
		marks.append(text)
	alerted = alerted or guard.get_node("Moves").current_animation == "alert"
	var last_seen: Variant = memory.get_last_known_position(id)
	if time > 5.0 and last_seen != null:  # the player is behind the crate from 4.5 s on
		closest_to_last_seen = minf(closest_to_last_seen, guard.global_position.distance_to(last_seen))
		if last_seen_while_hidden == null:
			last_seen_while_hidden = last_seen
	if shot != "" and time >= shot_at:
		set_physics_process(false)
		await RenderingServer.frame_post_draw
		get_viewport().get_texture().get_image().save_png(shot)
		get_tree().quit()
	elif time >= END:
		finish(memory, id)


func finish(memory: Node, id: int) -> void:
	set_physics_process(false)
	var names: Array = entered.map(func(e: Array) -> String: return e[0])
	check("it heard the footstep (the Stimulus3D its animation emits at 0.5 s) as trivia", heard)
	check("it noticed the intruder: a hostile memory, strong", most_hostile_r > 0.8, most_hostile_r)
	check("it chose: guard_post, chase, search, guard_post", names == ["guard_post", "chase", "search", "guard_post"], entered)
	check("it acted: the mark read !, then ?, then nothing", marks == ["", "!", "?", ""], marks)
	check("it played its alert animation", alerted)
	check("it remembered where the intruder was last seen, and went there", closest_to_last_seen < 1.0
		and last_seen_while_hidden != null and last_seen_while_hidden.distance_to(player.global_position) > 1.5,
		[closest_to_last_seen, last_seen_while_hidden, player.global_position])
	var hostile_now: Array = memory.get_memories().filter(func(m: Dictionary) -> bool: return m["entity_id"] == id and m["memory_type"] == HOSTILE)
	check("and it forgot, back at its post", guard.global_position.distance_to(level.get_node("Post").global_position) < 0.5
		and (hostile_now.is_empty() or hostile_now[0]["retrievability"] < 0.3), [guard.global_position, hostile_now])
	var copy := level.get_node_or_null("Guard2")
	if copy != null:  # the Done-when edit: a duplicate whose profile forgets ten times slower
		var copy_hostile: Array = copy.get_node("Memory").get_memories().filter(
			func(m: Dictionary) -> bool: return m["entity_id"] == id and m["memory_type"] == HOSTILE)
		var profiles := [guard.get_node("Memory").profile.stability_hostile, copy.get_node("Memory").profile.stability_hostile]
		check("the duplicated guard, slower to forget, is still searching", profiles == [3.0, 30.0]
			and String(copy.get_node("Mind").choice) == "search" and copy.get_node("Mark").text == "?"
			and not copy_hostile.is_empty() and copy_hostile[0]["retrievability"] > 0.3,
			[profiles, copy.get_node("Mind").choice, copy_hostile])
	print(JSON.stringify({"done": true}))
	get_tree().quit(1 if failed else 0)
