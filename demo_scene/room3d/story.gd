extends Node
## The 3D room's story check (`-- --story`, see tests/test_room3d.py): it only watches the guard's
## mind (signals and looks, no writes) and prints one JSON line per check, then a summary, and quits.
## The story: the guard notices the thief calmly, hears and sees the theft and pursues, searches the
## thief's last known position once the thief hides behind the wall, and goes back to its post as
## the memory fades.

const END := 40.0
const HOSTILE := 3
const OBSERVATION := 1

var time := 0.0
var entered: Array = []  ## [behavior, time, hostile R then, guard position]
var heard: Array = []  ## [time, type] of what the hearing perceived of the thief
var stole_at := INF
var hid_at := INF
var last_seen_moves: Array = []  ## times at which the thief's last known position changed
var before_theft := {}
var closest_in_search := INF
var most_hostile_r := 0.0
var _last_known: Variant = null
var thief_start := Vector3.ZERO
var failed := false  ## a check failed: the exit code is 1

@onready var guard: CharacterBody3D = $"../Guard"
@onready var mind: Node = $"../Guard/Mind"
@onready var memory: Node = $"../Guard/Memory"
@onready var hearing: Node = $"../Guard/Hearing"
@onready var thief: CharacterBody3D = $"../Thief"
@onready var post: Node3D = $"../Post"


func _ready() -> void:
	process_physics_priority = 100  # after the game's and the mind's nodes
	thief_start = thief.global_position
	mind.behavior_entered.connect(func(name: StringName) -> void:
		entered.append([String(name), snappedf(time, 0.01), hostile_r(), guard.global_position]))
	thief.stole.connect(func() -> void: stole_at = time)
	thief.hid.connect(func() -> void: hid_at = time)


func hostile_r() -> float:
	for m: Dictionary in memory.get_memories():
		if m["entity_id"] == thief.get_instance_id() and m["memory_type"] == HOSTILE:
			return m["retrievability"]
	return 0.0


func types_of_thief() -> Array:
	var found := []
	for m: Dictionary in memory.get_memories():
		if m["entity_id"] == thief.get_instance_id():
			found.append(m["memory_type"])
	found.sort()
	return found


func check(name: String, ok: bool, detail: Variant = null) -> void:
	failed = failed or not ok
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func _physics_process(delta: float) -> void:
	time += delta
	most_hostile_r = maxf(most_hostile_r, hostile_r())
	for seen: Dictionary in hearing.get_recent_perceptions():
		if seen["entity"] == thief.get_instance_id() and (heard.is_empty() or heard[-1][0] != seen["time"]):
			heard.append([seen["time"], seen["type"], snappedf(time, 0.01)])
	var known: Variant = memory.get_last_known_position(thief.get_instance_id())
	if known != _last_known:
		_last_known = known
		last_seen_moves.append(snappedf(time, 0.01))
	if before_theft.is_empty() and time >= thief.steal_at - 0.2:
		before_theft = {"types": types_of_thief(), "behaviors": entered.map(func(e: Array) -> String: return e[0])}
	if not entered.is_empty() and entered[-1][0] == "search" and known != null:
		closest_in_search = minf(closest_in_search, guard.global_position.distance_to(known))
	if time >= END:
		finish()


func finish() -> void:
	set_physics_process(false)
	var names: Array = entered.map(func(e: Array) -> String: return e[0])
	var known: Variant = memory.get_last_known_position(thief.get_instance_id())
	check("it notices the thief before the theft, calmly: an observation, on watch",
		before_theft.get("types", []) == [OBSERVATION] and before_theft.get("behaviors", []) == ["watch"], before_theft)
	check("it hears the theft's clatter", heard.any(func(h: Array) -> bool: return h[1] == OBSERVATION and h[2] >= stole_at), heard)
	check("the story runs watch, pursue, search, watch", names == ["watch", "pursue", "search", "watch"], entered)
	if names.size() < 4:
		print(JSON.stringify({"done": true}))
		get_tree().quit(1)
		return
	check("it pursues within a second of seeing the theft", entered[1][1] >= stole_at and entered[1][1] <= stole_at + 1.0
		and most_hostile_r > 0.8, [stole_at, entered[1], most_hostile_r])
	var hidden_for := [hid_at, last_seen_moves.back()]
	check("once the thief hides behind the wall it is never seen again", hid_at < END and last_seen_moves.back() <= hid_at, hidden_for)
	# a pillar, then the wall, hid it on its way to the door: the last place seen is on that way
	var hiding_place: Vector3 = thief.escape.back()
	check("the last known position is on its way out, not where it hides", known != null and known.z < -4.0
		and known.x > thief_start.x and known.distance_to(hiding_place) > 5.0, [known, hiding_place])
	check("it searches the last known position (arrives there)", closest_in_search <= 1.5, closest_in_search)
	check("it loses interest as the memory fades (R below the search threshold)", entered[3][2] < 0.3 and entered[3][1] > entered[2][1], entered[3])
	check("and walks back to its post", guard.global_position.distance_to(post.global_position) <= 1.0, guard.global_position)
	print(JSON.stringify({"story": "room3d", "entered": entered, "stole_at": stole_at, "hid_at": hid_at,
		"last_seen": last_seen_moves.back(), "hostile_r_end": hostile_r()}))
	print(JSON.stringify({"done": true}))
	get_tree().quit(1 if failed else 0)
