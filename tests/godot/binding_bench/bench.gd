extends SceneTree
## Per-callback cost, Python against GDScript, in one run. Prints one JSON line per measurement:
## {"case": ..., "lang": "python"|"gdscript", "nodes": N, "us": per-callback microseconds}.

const FRAMES := 40
const SIZES := [1000, 10000]
var GdEmpty: Script = load("res://gd_empty.gd")

var phase := 0
var frame_times: Array = []
var last := 0
var baseline := 0.0
var holder: Node


func _initialize() -> void:
	Engine.max_fps = 0
	OS.low_processor_usage_mode = false
	holder = Node.new()
	root.add_child(holder)
	bench_calls()


func emit(case_name: String, lang: String, nodes: int, us: float) -> void:
	print(JSON.stringify({"case": case_name, "lang": lang, "nodes": nodes, "us": us}))


func median(values: Array) -> float:
	var sorted := values.duplicate()
	sorted.sort()
	return sorted[sorted.size() / 2]


func bench_calls() -> void:
	var values := PackedFloat32Array()
	values.resize(1000)
	values.fill(0.5)
	var table := {}
	for k in 10:
		table["key%d" % k] = k
	var context := {"health": 0.5, "threat": 0.8, "distance": 12.5, "ammo": 3, "alerted": true}
	for n in SIZES:
		var py_nodes: Array[PyCalls] = []
		var gd_nodes: Array[GdBench] = []
		for i in n:
			py_nodes.append(PyCalls.new())
			gd_nodes.append(GdBench.new())
		for repeat in 3:
			var t0 := Time.get_ticks_usec()
			for node: PyCalls in py_nodes:
				node.add(1, 2)
			var t1 := Time.get_ticks_usec()
			for node: GdBench in gd_nodes:
				node.add(1, 2)
			var t2 := Time.get_ticks_usec()
			var u0 := Time.get_ticks_usec()
			for node in py_nodes:
				node.add(1, 2)
			var u1 := Time.get_ticks_usec()
			var p0 := Time.get_ticks_usec()
			for node: PyCalls in py_nodes:
				node.take(values, table)
			var p1 := Time.get_ticks_usec()
			for node: GdBench in gd_nodes:
				node.take(values, table)
			var p2 := Time.get_ticks_usec()
			var e_py: float = py_nodes[0].engine_calls(n)
			var e_gd: float = gd_nodes[0].engine_calls(n)
			if repeat == 2:
				emit("engine call get_child_count() from the language", "python", n, e_py)
				emit("engine call get_child_count() from the language", "gdscript", n, e_gd)
				emit("typed call add(int, int) -> int", "python", n, float(t1 - t0) / n)
				emit("typed call add(int, int) -> int", "gdscript", n, float(t2 - t1) / n)
				emit("untyped call add(1, 2)", "python", n, float(u1 - u0) / n)
				emit("call with PackedFloat32Array[1000] + Dictionary[10]", "python", n, float(p1 - p0) / n)
				emit("call with PackedFloat32Array[1000] + Dictionary[10]", "gdscript", n, float(p2 - p1) / n)
		# The Dictionary cases, after the others (which are measured as they were before these).
		for repeat in 3:
			var c0 := Time.get_ticks_usec()
			for node: PyCalls in py_nodes:
				node.context_size(context)
			var c1 := Time.get_ticks_usec()
			for node: GdBench in gd_nodes:
				node.context_size(context)
			var c2 := Time.get_ticks_usec()
			var d0 := Time.get_ticks_usec()
			for node: PyCalls in py_nodes:
				node.strongest()
			var d1 := Time.get_ticks_usec()
			for node: GdBench in gd_nodes:
				node.strongest()
			var d2 := Time.get_ticks_usec()
			if repeat == 2:
				emit("call with a 5-key Dictionary argument", "python", n, float(c1 - c0) / n)
				emit("call with a 5-key Dictionary argument", "gdscript", n, float(c2 - c1) / n)
				emit("call returning a 6-key Dictionary", "python", n, float(d1 - d0) / n)
				emit("call returning a 6-key Dictionary", "gdscript", n, float(d2 - d1) / n)
		# Rows added with typed Dictionaries and _get (after the others, which stay as they were).
		var typed_context: Dictionary[String, float] = {"health": 0.5, "threat": 0.8, "distance": 12.5, "ammo": 3.0, "alerted": 1.0}
		for repeat in 3:
			var k0 := Time.get_ticks_usec()
			for node: PyCalls in py_nodes:
				node.typed_context(typed_context)
			var k1 := Time.get_ticks_usec()
			for node: GdBench in gd_nodes:
				node.typed_context(typed_context)
			var k2 := Time.get_ticks_usec()
			var g0 := Time.get_ticks_usec()
			for node: PyCalls in py_nodes:
				node.get(&"level")
			var g1 := Time.get_ticks_usec()
			for node: GdBench in gd_nodes:
				node.get(&"level")
			var g2 := Time.get_ticks_usec()
			if repeat == 2:
				emit("call with a 5-key Dictionary[String, float] argument", "python", n, float(k1 - k0) / n)
				emit("call with a 5-key Dictionary[String, float] argument", "gdscript", n, float(k2 - k1) / n)
				emit("_get-backed property read get(&\"level\")", "python", n, float(g1 - g0) / n)
				emit("_get-backed property read get(&\"level\")", "gdscript", n, float(g2 - g1) / n)
		# A StringName result (after the others, which stay as they were).
		for repeat in 3:
			var s0 := Time.get_ticks_usec()
			for node: PyCalls in py_nodes:
				node.behavior()
			var s1 := Time.get_ticks_usec()
			for node: GdBench in gd_nodes:
				node.behavior()
			var s2 := Time.get_ticks_usec()
			if repeat == 2:
				emit("call returning a StringName", "python", n, float(s1 - s0) / n)
				emit("call returning a StringName", "gdscript", n, float(s2 - s1) / n)
		# A 3-key Dictionary literal made per call, as a node passes its context each frame (after
		# the others, which stay as they were): both sides build the Dictionary.
		for repeat in 3:
			var l0 := Time.get_ticks_usec()
			var level := 0.0
			for node: PyCalls in py_nodes:
				level += 0.001
				node.context_size({"threat": level, "calm": 0.5, "noise": 0.5})
			var l1 := Time.get_ticks_usec()
			for node: GdBench in gd_nodes:
				level += 0.001
				node.context_size({"threat": level, "calm": 0.5, "noise": 0.5})
			var l2 := Time.get_ticks_usec()
			if repeat == 2:
				emit("call with a 3-key Dictionary literal made per call", "python", n, float(l1 - l0) / n)
				emit("call with a 3-key Dictionary literal made per call", "gdscript", n, float(l2 - l1) / n)
		for node in py_nodes:
			node.free()
		for node in gd_nodes:
			node.free()


# _process phases: 0 baseline (no nodes), then for each size: python nodes, gdscript nodes.
func start_phase() -> void:
	for child in holder.get_children():
		child.free()
	frame_times.clear()
	var plan := phase_plan()
	if plan.is_empty():
		return
	for i in plan[1]:
		var node: Node
		if plan[0] == "python":
			node = PyEmpty.new()
		else:
			node = Node.new()
			node.set_script(GdEmpty)
		holder.add_child(node)


func phase_plan() -> Array:
	if phase == 0:
		return ["none", 0]
	var index := phase - 1
	if index >= SIZES.size() * 2:
		return []
	return ["python" if index % 2 == 0 else "gdscript", SIZES[index / 2]]


func _process(_delta: float) -> bool:
	var now := Time.get_ticks_usec()
	if last != 0 and frame_times.size() < FRAMES + 5:
		frame_times.append(now - last)
	last = now
	if frame_times.size() == 0 and phase == 0:
		start_phase()
		last = Time.get_ticks_usec()
		return false
	if frame_times.size() >= FRAMES + 5:
		var m := median(frame_times.slice(5))
		var plan := phase_plan()
		if phase == 0:
			baseline = m
		else:
			emit("empty _process", plan[0], plan[1], (m - baseline) / plan[1])
		phase += 1
		if phase_plan().is_empty():
			quit(0)
			return true
		start_phase()
		last = Time.get_ticks_usec()
	return false
