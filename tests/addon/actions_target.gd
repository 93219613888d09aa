extends SceneTree
## Move actions toward and away from the selector's target (target_from memory), in the engine with
## physics on (run with --fixed-fps 60). A guard remembers a thief (an observation that fades in a few
## seconds) last seen at the end of an L-shaped NavigationRegion2D; the thief walks on, out of sight.
## While awareness is search or pursue the guard pursues: its NavigationAgent2D is sent to the last
## known position (not where the thief is now) and the guard follows the path around the corner and
## stops there. When the memory fades below search, the selector (the awareness through the
## Dictionary path) changes to idle, and the move stops. A coward with no agent flees straight away
## from the thief's last known position until flee_distance from it. One JSON line per check.

const B = preload("res://tests/addon/utility_builders.gd")
const LAST_SEEN := Vector2(200, 200)

var frame := 0
var guard: CharacterBody2D
var coward: CharacterBody2D
var agent: NavigationAgent2D
var selector: Node
var coward_selector: Node
var memory: Node
var coward_memory: Node
var thief: Node2D
var thief_id := 0
var guard_path := []
var entered := []  # [behavior, awareness when it began, frame]
var marks := {}


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func npc(label: String, at: Vector2, parent: Node) -> CharacterBody2D:
	var body := CharacterBody2D.new()
	body.name = label
	body.position = at
	parent.add_child(body)
	return body


func _initialize() -> void:
	var world := Node2D.new()
	world.name = "World"
	root.add_child(world)
	var poly := NavigationPolygon.new()
	poly.vertices = PackedVector2Array([Vector2(-20, -20), Vector2(220, -20), Vector2(220, 20), Vector2(180, 20),
		Vector2(-20, 20), Vector2(220, 220), Vector2(180, 220)])
	poly.add_polygon(PackedInt32Array([0, 1, 2, 3, 4]))
	poly.add_polygon(PackedInt32Array([3, 2, 5, 6]))
	var region := NavigationRegion2D.new()
	region.navigation_polygon = poly
	world.add_child(region)
	thief = Node2D.new()
	thief.name = "Thief"
	thief.position = LAST_SEEN
	world.add_child(thief)
	thief_id = thief.get_instance_id()

	guard = npc("Guard", Vector2.ZERO, world)
	var profile: Resource = ClassDB.instantiate("MemoryProfile")
	profile.stability_observation = 4.0  # S = 4 s at salience 0.5: search (R > 0.3) for 4.8 s
	memory = ClassDB.instantiate("MemoryStream")
	memory.profile = profile
	guard.add_child(memory)
	agent = NavigationAgent2D.new()
	guard.add_child(agent)
	var awareness: Resource = B.consideration("awareness")
	awareness.use_input_range = true
	awareness.input_max = 3.0  # pursue 1, search 0.67, puzzled 0.33
	var pursue: Resource = B.behavior("pursue", [awareness])
	pursue.on_enter = B.actions([B.resource("MoveAction", {"destination": "target", "speed": 200.0, "arrive_distance": 4.0})])
	var idle: Resource = B.behavior("idle", [B.consideration("calm")])
	selector = B.selector([pursue, idle])
	selector.target_from = "memory"
	guard.add_child(selector)
	selector.behavior_entered.connect(func(name: StringName) -> void:
		entered.append([String(name), memory.awareness_of(thief_id), frame]))

	coward = npc("Coward", Vector2(100, 0), world)
	coward_memory = ClassDB.instantiate("MemoryStream")
	coward.add_child(coward_memory)
	var flee: Resource = B.behavior("flee", [B.consideration("fear")])
	flee.on_enter = B.actions([B.resource("MoveAction", {"destination": "away_from_target", "flee_distance": 150.0,
		"speed": 120.0})])
	coward_selector = B.selector([flee])
	coward_selector.target_from = "memory"
	coward.add_child(coward_selector)

	memory.record_event(thief_id, MemoryStream.OBSERVATION, 0.5)
	memory.note_sighting(thief_id, LAST_SEEN)
	coward_memory.record_event(thief_id, MemoryStream.HOSTILE, 0.9)
	coward_memory.note_sighting(thief_id, Vector2(200, 0))
	thief.position = Vector2(600, 600)  # it walks on, unseen
	check("no warnings for a good setup", NpcMindDesigner.get_configuration_warnings(selector).is_empty()
		and NpcMindDesigner.get_configuration_warnings(coward_selector).is_empty(),
		[NpcMindDesigner.get_configuration_warnings(selector), NpcMindDesigner.get_configuration_warnings(coward_selector)])


func _physics_process(_delta: float) -> bool:
	guard_path.append(guard.global_position)
	return false


func _process(_delta: float) -> bool:
	frame += 1
	selector.evaluate({"awareness": memory.awareness_of(thief_id), "calm": 0.5})
	coward_selector.evaluate({"fear": 1.0})
	if frame == 200:  # 3.3 s: arrived, the memory still at search
		check("pursuing while the memory is at search", entered.size() == 1 and entered[0][0] == "pursue"
			and memory.awareness_of(thief_id) == MemoryStream.AWARENESS_SEARCH, [entered, memory.awareness_of(thief_id)])
		check("the agent was sent to the last known position", agent.target_position == LAST_SEEN
			and selector.get_target_position() == LAST_SEEN, [agent.target_position, selector.get_target_position()])
		var crossed := guard_path.filter(func(p: Vector2) -> bool: return p.x < 150.0 and p.y > 40.0)
		check("the guard followed the agent's path around the corner", crossed.is_empty(), crossed.slice(0, 5))
		check("and stopped there", guard.global_position.distance_to(LAST_SEEN) <= 4.0 and guard.velocity == Vector2.ZERO,
			[guard.global_position, guard.velocity])
		var threat := Vector2(200, 0)
		check("the coward fled straight away to flee_distance and stopped",
			coward.global_position.distance_to(threat) >= 150.0 - 8.0 and absf(coward.global_position.y) < 1e-3
			and coward.velocity == Vector2.ZERO, [coward.global_position, coward.velocity])
		guard.global_position = Vector2(190, 150)  # pushed aside: the pursuit goes on while it holds
	if frame == 230:
		check("the pursuit follows on while the behavior holds", guard.global_position.distance_to(LAST_SEEN) <= 4.0,
			guard.global_position)
		marks["ticks"] = frame
	if frame == 420:  # 7 s: the memory fell below search at 4.8 s
		check("when the memory fades the NPC changes behavior", entered.size() == 2 and entered[1][0] == "idle"
			and entered[1][1] < MemoryStream.AWARENESS_SEARCH and entered[1][2] > 230, entered)
		marks["at"] = guard.global_position
		guard.global_position = Vector2(190, 150)  # pushed aside again: no pursuit now
	if frame == 440:
		check("the move ended with its behavior", guard.global_position == Vector2(190, 150) and guard.velocity == Vector2.ZERO,
			[guard.global_position, guard.velocity])
		print(JSON.stringify({"done": true}))
		return true
	return false
