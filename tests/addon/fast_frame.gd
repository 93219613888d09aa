extends SceneTree
## Frames run whole on the update thread (NpcMindServer.update_on_thread, with no main-thread Python
## between two frames: the binding emits the last update's signals and hands the frame over in C),
## in the real engine at --fixed-fps 60. The same NPCs, records, time scale and pause, run once with
## nothing calling Python between frames and once calling NpcMindServer.now() every frame (each
## frame then runs Python on the main thread, as before): the same signals in the same frames and
## order, the same clock. One JSON line per check.

const NPCS := 16
const FRAMES := 150
const HOSTILE_FLAG := 8

const B = preload("res://tests/addon/utility_builders.gd")

var frame := 0
var heard: Array = []  # [frame in the phase, npc, signal, behavior]


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func make_npc(i: int, shared: Array[UtilityBehavior], started: int) -> Node2D:
	var npc := Node2D.new()
	npc.name = "Npc%d" % i
	var memory: Node = ClassDB.instantiate("MemoryStream")
	memory.name = "MemoryStream"
	var profile: Resource = ClassDB.instantiate("MemoryProfile")
	profile.stability_hostile = 0.4  # forgotten within the phase: pursue, then idle again
	memory.profile = profile
	npc.add_child(memory)
	var selector: Node = B.memory_selector(shared, HOSTILE_FLAG)
	npc.add_child(selector)
	root.add_child(npc)
	for signal_name: String in ["behavior_exited", "behavior_entered", "behavior_changed"]:
		selector.connect(signal_name, func(chosen: StringName) -> void:
			heard.append([frame - started, i, signal_name, String(chosen)]))
	return npc


## One phase; `poke`: a Python call every frame. The signals heard, the clock's seconds, the frames
## run on the update thread.
func phase(poke: bool, thief: Node2D) -> Dictionary:
	heard = []
	var shared := B.pursue_or_idle()
	var started := frame
	var npcs: Array[Node2D] = []
	for i in NPCS:
		npcs.append(make_npc(i, shared, started))
	var thread_frames: float = NpcMindServer.get_metrics()["binding/thread_frames"]
	var clock_start: float = NpcMindServer.now()
	for step in FRAMES:
		if step >= 5 and step < 5 + 3 * NPCS and (step - 5) % 3 == 0:  # one NPC sees the thief every 3 frames
			npcs[(step - 5) / 3].get_node("MemoryStream").record_event(thief.get_instance_id(), MemoryStream.HOSTILE, 0.9)
		if step == 70:
			Engine.time_scale = 0.5
		if step == 100:
			paused = true
		if step == 110:
			paused = false
		if poke:
			NpcMindServer.now()
		await process_frame
		frame += 1
	var found := {
		"signals": heard.duplicate(), "clock": snappedf(NpcMindServer.now() - clock_start, 1e-9),
		"thread_frames": NpcMindServer.get_metrics()["binding/thread_frames"] - thread_frames,
	}
	Engine.time_scale = 1.0
	for npc in npcs:
		npc.free()
	await process_frame
	frame += 1
	return found


func _initialize() -> void:
	NpcMindServer.update_on_thread = true
	var thief := Node2D.new()
	root.add_child(thief)
	await process_frame
	frame += 1
	var fast: Dictionary = await phase(false, thief)
	var python: Dictionary = await phase(true, thief)
	check("with no Python between frames, most frames run on the update thread",
		fast.thread_frames >= FRAMES / 2, fast.thread_frames)
	check("a frame after main-thread Python runs Python on the main thread", python.thread_frames == 0,
		python.thread_frames)
	var changed: Array = fast.signals.filter(func(s: Array) -> bool: return s[2] == "behavior_changed")
	var pursued: Array = changed.filter(func(s: Array) -> bool: return s[3] == "pursue")
	var idled: Array = changed.filter(func(s: Array) -> bool: return s[3] == "idle" and s[0] > 5)
	check("every NPC pursues once it sees the thief and idles once it forgot",
		pursued.size() == NPCS and idled.size() == NPCS, [pursued.size(), idled.size()])
	check("the signals are the same, in the same frames and order",
		fast.signals == python.signals, [fast.signals.size(), python.signals.size()])
	check("the clock moved alike, scaled and paused", fast.clock == python.clock and fast.clock > 0.0,
		[fast.clock, python.clock])
	NpcMindServer.update_on_thread = false
	print(JSON.stringify({"done": true}))
	quit()
