extends SceneTree
## Frames run whole on the update thread (NpcMindServer.update_on_thread, with no main-thread Python
## between two frames: the binding emits the last update's signals and hands the frame over in C),
## in the real engine at --fixed-fps 60. The same NPCs, records, time scale and pause, run once with
## nothing calling Python between frames and once calling NpcMindServer.now() every frame (each
## frame then runs Python on the main thread, as before): the same signals in the same frames and
## order, the same clock. Then, with no NPC left, the server rests (the binding keeps the frames in
## C and runs no Python for them), with the update on its thread and without: its clock, scaled and
## paused, moves as it does when a Python call every frame keeps each frame Python's. One JSON line
## per check.

const NPCS := 16
const FRAMES := 150
const HOSTILE_FLAG := 8
const REST_FRAMES := 300  # more than the binding keeps at once (256): a frame in the middle is Python's

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


## At frame `step` of a phase: the time scale halved from `scaled_from` on, the tree paused from
## `paused_from` until `paused_until`.
func scale_and_pause(step: int, scaled_from: int, paused_from: int, paused_until: int) -> void:
	if step == scaled_from:
		Engine.time_scale = 0.5
	if step == paused_from:
		paused = true
	if step == paused_until:
		paused = false


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
		scale_and_pause(step, 70, 100, 110)
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


## A phase with no NPC; `poke`: a Python call every frame. The clock's seconds over the phase and
## the frames the binding kept (reading them is a Python call, which hands the frames over first).
func rest_phase(poke: bool) -> Dictionary:
	await process_frame  # (Python's, the last NPC just freed: the frame that finds the server idle)
	var rested: float = NpcMindServer.get_metrics()["binding/rested_frames"]
	var clock_start: float = NpcMindServer.now()
	for step in REST_FRAMES:
		scale_and_pause(step, 100, 150, 170)
		if poke:
			NpcMindServer.now()
		await process_frame
	var found := {
		"clock": snappedf(NpcMindServer.now() - clock_start, 1e-9),
		"rested": NpcMindServer.get_metrics()["binding/rested_frames"] - rested,
	}
	Engine.time_scale = 1.0
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
	var rests := {}
	for on_thread: bool in [true, false]:
		NpcMindServer.update_on_thread = on_thread
		rests[on_thread] = [await rest_phase(false), await rest_phase(true)]
	var rested: Array = rests.values().map(func(two: Array) -> float: return two[0].rested)
	var poked: Array = rests.values().map(func(two: Array) -> float: return two[1].rested)
	var clocks: Array = rests.values().map(func(two: Array) -> Array: return [two[0].clock, two[1].clock])
	check("with no NPC left the server rests: its frames run no Python, with the update thread and without",
		rested.all(func(count: float) -> bool: return count >= REST_FRAMES - 5), rested)
	check("a Python call every frame keeps each frame Python's", poked == [0.0, 0.0], poked)
	# 300 frames of 1/60 s, 20 of them paused (the pause and the scale take effect a frame late)
	check("a resting clock moves as the frame-by-frame one, scaled and paused",
		clocks.all(func(two: Array) -> bool: return two[0] == two[1] and absf(two[0] - 280.0 / 60.0) < 0.05),
		clocks)
	NpcMindServer.update_on_thread = false
	print(JSON.stringify({"done": true}))
	quit()
