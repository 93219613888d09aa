extends SceneTree
## UtilitySelector.set_input from GDScript, as per-node code feeds the batched path: `npcs` selectors
## of one definition (three behaviors over threat, calm and noise), each given its three inputs every
## frame. Three loops a frame over the same count, in an order that turns each frame (so neither
## runs always first): typed (`var s: UtilitySelector`, StringName keys: ptrcall), untyped (a Node
## variable, String keys: the engine's Variant call) and the baseline, the same three calls on a
## GDScript object whose set_input writes a Dictionary. Then the hand-over of the queued calls to
## Python (`take`: the first Python call after the loops, less the same call again), per call of the
## typed and untyped loops. After warm-up frames, prints one JSON line: per loop (and the take) the
## microseconds per call of each frame, the binding's count of calls queued in C over the timed
## frames, and whether every selector's choice is the one its last inputs give.

const Build := preload("res://tests/addon/utility_builders.gd")
const WARMUP := 30
const KEYS: Array[StringName] = [&"threat", &"calm", &"noise"]


class GdInputs:
	var inputs := {}

	func set_input(key: StringName, value: float) -> void:
		inputs[key] = value


var npcs := 200
var frames := 200
var frame := 0
var typed: Array[UtilitySelector] = []
var untyped: Array[Node] = []
var baseline: Array[GdInputs] = []
var usec := {"typed": [], "untyped": [], "gdscript": [], "take": []}
var queued_at_start := 0.0
var twin: Node
var values := PackedFloat64Array()  # this frame's inputs, 3 per selector (made before the loops)


func _initialize() -> void:
	for argument in OS.get_cmdline_user_args():
		if argument.begins_with("--npcs="):
			npcs = int(argument.trim_prefix("--npcs="))
		elif argument.begins_with("--frames="):
			frames = int(argument.trim_prefix("--frames="))
	var behaviors := [Build.behavior("patrol", [Build.consideration("calm")]),
		Build.behavior("pursue", [Build.consideration("threat")]),
		Build.behavior("search", [Build.consideration("noise")])]
	for i in npcs:
		var one: Node = Build.selector(behaviors)
		root.add_child(one)
		typed.append(one)
		var other: Node = Build.selector(behaviors)
		root.add_child(other)
		untyped.append(other)
		baseline.append(GdInputs.new())
	twin = Build.selector(behaviors)  # the Dictionary path, for the check
	root.add_child(twin)


func _value(i: int, k: int) -> float:
	return float((i * 7 + k * 3 + frame / 10) % 11) / 10.0


func _typed_loop() -> int:
	var start := Time.get_ticks_usec()
	for i in npcs:
		var s: UtilitySelector = typed[i]
		s.set_input(&"threat", values[3 * i])
		s.set_input(&"calm", values[3 * i + 1])
		s.set_input(&"noise", values[3 * i + 2])
	return Time.get_ticks_usec() - start


func _untyped_loop() -> int:
	var start := Time.get_ticks_usec()
	for i in npcs:
		var s: Node = untyped[i]
		s.set_input("threat", values[3 * i])
		s.set_input("calm", values[3 * i + 1])
		s.set_input("noise", values[3 * i + 2])
	return Time.get_ticks_usec() - start


func _baseline_loop() -> int:
	var start := Time.get_ticks_usec()
	for i in npcs:
		var s: GdInputs = baseline[i]
		s.set_input(&"threat", values[3 * i])
		s.set_input(&"calm", values[3 * i + 1])
		s.set_input(&"noise", values[3 * i + 2])
	return Time.get_ticks_usec() - start


func _process(_delta: float) -> bool:
	frame += 1
	if frame == WARMUP:
		queued_at_start = NpcMindServer.get_metrics()["binding/queued_calls"]
	values.resize(3 * npcs)
	for i in npcs:
		for k in 3:
			values[3 * i + k] = _value(i, k)
	var loops := ["typed", "untyped", "gdscript"]
	for turn in frame % 3:
		loops.push_back(loops.pop_front())
	for loop: String in loops:
		var spent: int = _typed_loop() if loop == "typed" else (_untyped_loop() if loop == "untyped" else _baseline_loop())
		if frame > WARMUP:
			usec[loop].append(float(spent) / (3 * npcs))
	# the hand-over of the frame's queued calls to Python: the first Python call after the loops
	# takes them (a call that reads nothing they change), less the same call again
	var before := Time.get_ticks_usec()
	typed[0].get_behavior_names()
	var taken := Time.get_ticks_usec()
	typed[0].get_behavior_names()
	var again := Time.get_ticks_usec()
	if frame > WARMUP:
		usec["take"].append(float((taken - before) - (again - taken)) / (6 * npcs))
	if frame < WARMUP + frames:
		return false
	# the choices made at the end of the last frame, from the inputs of that frame (same every 10 frames)
	var wrong := 0
	frame -= 1
	for i in npcs:
		var context := {"threat": _value(i, 0), "calm": _value(i, 1), "noise": _value(i, 2)}
		var expected: StringName = twin.evaluate(context)
		if typed[i].choice != expected or untyped[i].choice != expected:
			wrong += 1
	var queued: float = NpcMindServer.get_metrics()["binding/queued_calls"] - queued_at_start
	print(JSON.stringify({"npcs": npcs, "usec": usec, "queued": queued, "wrong": wrong}))
	return true
