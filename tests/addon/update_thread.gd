extends SceneTree
## The server's update on its thread (NpcMindServer.update_on_thread), in the real engine at
## --fixed-fps 60: the same NPCs and records, run once with the update on the main thread and once
## on the thread, choose alike and remember alike, their signals one frame later; the C answer
## tables are off meanwhile and on again after; turning it off delivers what the last update owed;
## a node freed while the update runs, a DistanceInput (read on the main thread) and a mistake met
## on the thread (reported once, on the main thread) all behave. One JSON line per check.

const NPCS := 12
const HOSTILE_FLAG := 8
const WATCH := 8  # frames read after the record

const B = preload("res://tests/addon/utility_builders.gd")

var changes := {}  # npc index -> [[frame, behavior], ...]
var frame := 0


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func stream() -> Node:
	var made: Node = ClassDB.instantiate("MemoryStream")
	made.name = "MemoryStream"
	return made


func make_npcs(shared: Array[UtilityBehavior]) -> Array[Node2D]:
	var made: Array[Node2D] = []
	for i in NPCS:
		var npc := Node2D.new()
		npc.name = "Npc%d" % i
		npc.add_child(stream())
		var selector: Node = B.memory_selector(shared, HOSTILE_FLAG)
		npc.add_child(selector)
		root.add_child(npc)
		changes[i] = []
		selector.behavior_changed.connect(func(chosen: StringName) -> void: changes[i].append([frame, String(chosen)]))
		made.append(npc)
	return made


func next_frame() -> void:
	await process_frame
	frame += 1


func answered() -> float:
	return NpcMindServer.get_metrics()["binding/answered_calls"]


## One phase: NPC 0 records a thief at a frame; the frames its pursue takes, its awareness after.
func phase(threaded: bool, shared: Array[UtilityBehavior], thief: Node2D) -> Dictionary:
	NpcMindServer.update_on_thread = threaded
	var npcs := make_npcs(shared)
	for i in 3:
		await next_frame()
	var memory: Node = npcs[0].get_node("MemoryStream")
	var answered_before := answered()
	var recorded_at := frame
	memory.record_event(thief.get_instance_id(), MemoryStream.HOSTILE, 0.9)
	var awareness := []
	for i in WATCH:
		await next_frame()
		var held: Array = memory.get_memories()
		awareness.append([memory.awareness_of(thief.get_instance_id()), held[0].retrievability if held else -1.0])
	var pursued: Array = changes[0].filter(func(change: Array) -> bool: return change[1] == "pursue")
	var found := {
		"delay": pursued[0][0] - recorded_at if pursued else -1, "awareness": awareness,
		"answered": answered() - answered_before, "target": npcs[0].get_node("Selector").get_target_id(),
	}
	for npc in npcs:
		npc.free()
	await next_frame()
	return found


func _initialize() -> void:
	var shared := B.pursue_or_idle()
	var thief := Node2D.new()
	root.add_child(thief)
	await next_frame()
	var off: Dictionary = await phase(false, shared, thief)
	var on: Dictionary = await phase(true, shared, thief)
	check("on the thread, the choice is the same and its signal comes one frame later",
		off.delay >= 0 and on.delay == off.delay + 1 and on.target == thief.get_instance_id(), [off.delay, on.delay])
	check("memory reads from the main thread see the update's state, as without the thread",
		on.awareness == off.awareness and off.awareness[0][0] > 0 and off.awareness[-1][1] < off.awareness[0][1],
		[on.awareness, off.awareness])
	check("the C answer tables are off while the update runs on the thread, and answer without it",
		on.answered == 0 and off.answered > 0, [on.answered, off.answered])

	# Turned off while an update runs: what it owed is delivered, and the tables answer again.
	NpcMindServer.update_on_thread = true
	var npcs := make_npcs(shared)
	for i in 3:
		await next_frame()
	npcs[1].get_node("MemoryStream").record_event(thief.get_instance_id(), MemoryStream.HOSTILE, 0.9)
	await next_frame()  # the update that folds the record runs on the thread now
	NpcMindServer.update_on_thread = false
	await next_frame()
	var owed_delivered: bool = changes[1].any(func(change: Array) -> bool: return change[1] == "pursue")
	var before := answered()
	for i in 3:
		await next_frame()
		npcs[1].get_node("MemoryStream").awareness_of(thief.get_instance_id())
	check("turned off mid-update, the signal it owed is delivered and the tables answer again",
		owed_delivered and answered() > before, [changes[1], answered() - before])

	# On the thread again: a node freed while the update runs, a DistanceInput, a mistake.
	NpcMindServer.update_on_thread = true
	var count: float = NpcMindServer.get_metrics()["selectors/count"]
	npcs[2].free()
	await next_frame()
	var bad: Node = npcs[3].get_node("Selector")
	bad.blackboard = {"calm": "very"}  # not a number: a mistake the update meets on its thread
	var repeats: float = NpcMindServer.get_metrics()["mistakes/repeats"]
	for i in 4:
		await next_frame()
	var repeated: float = NpcMindServer.get_metrics()["mistakes/repeats"] - repeats
	var near := Node2D.new()
	near.name = "NearNpc"
	near.add_child(stream())
	var near_selector: Node = B.memory_selector(B.pursue_or_idle(true))
	near.add_child(near_selector)
	root.add_child(near)
	await next_frame()
	near.get_node("MemoryStream").record_event(thief.get_instance_id(), MemoryStream.HOSTILE, 0.9)
	near.get_node("MemoryStream").note_sighting(thief.get_instance_id(), near.position + Vector2(5, 0))
	for i in 4:
		await next_frame()
	check("a node freed while the update runs leaves it", NpcMindServer.get_metrics()["selectors/count"] == count, count)
	check("a DistanceInput is read on the main thread and chooses", near_selector.choice == &"pursue", near_selector.choice)
	check("a mistake met on the thread is reported once, its repeats counted", repeated >= 2, repeated)
	check("the main thread's wait for the update is a monitor",
		NpcMindServer.get_monitor_names().has("server/update_wait_ms"), NpcMindServer.get_monitor_names())
	# The manual clock: advance() runs the update at once, on the main thread, after the thread's.
	NpcMindServer.clock = "manual"
	npcs[4].get_node("MemoryStream").record_event(thief.get_instance_id(), MemoryStream.HOSTILE, 0.9)
	NpcMindServer.advance(0.1)
	var advanced: bool = changes[4].any(func(change: Array) -> bool: return change[1] == "pursue")
	await next_frame()
	check("advance() on the manual clock chooses at once with the thread on", advanced, changes[4])
	NpcMindServer.update_on_thread = false
	print(JSON.stringify({"done": true}))
	quit()
