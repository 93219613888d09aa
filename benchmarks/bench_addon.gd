extends SceneTree
## Frame-time benchmark of the addon (run by benchmarks/bench_addon.py, never by the tests).
## N guards move every frame (the game's own work). Phase "without": plain Node2D guards. Phase "with":
## each guard also has a MemoryStream, a UtilitySelector and an AsyncLLMDecision, and every frame each
## guard records the 2 people it sees (who changes every 1.5-2 s, so most records are refractory
## refreshes, as in a game), reads its awareness of one of them and chooses a behavior; one guard in
## 300 asks the LLM each frame (no endpoint: each request ends in the fallback tier at once).
##   --npcs=N --frames=F --path=batched|dictionary|nodes|gdscript [--signals=off] [--order=turns]
## Path gdscript is the same logic written in plain GDScript: the Dictionary path's passes on the
## baseline's GdMemory / GdSelector objects (no npc_mind nodes, no LLM requests), for the frame-time
## comparison of issue 14.
## Path nodes is the Dictionary path's memory calls with the selectors fed per node for the batch:
## one UtilitySelector.set_inputs call and one `choice` read per guard, the server choosing for
## the whole definition at the end of the frame (no director, no packed arrays).
## With --order=turns (paths dictionary and gdscript) each guard makes its calls in its own turn (record,
## record, read, choose; then the next guard), as per-guard `_process` code does, instead of one pass
## over the guards per call; only the frame times are reported then (no per-call times).
## With --signals=off every MemoryStream has emit_signals off and the crowd code reads all memory events
## in one call a frame (NpcMindServer.drain_memory_events) instead of one engine signal per event.
## Prints one JSON line: frame intervals (ms) of both phases, and on the Dictionary path the time per
## call of each node method as GDScript sees it (measured over whole passes of the guards, loop and
## arguments included; query_strongest, which wakes memories, once over every guard at the end, after
## the same recalls untimed in the frame before, as a game recalling every frame makes them), and the
## server's own step time (its server/step_ms monitor) read over 30 more frames of the same work.

const ENTITIES := 256
const EVENTS_PER_GUARD := 2

var npcs := 1000
var frames := 300
var path := "batched"
var signals := true
var turns := false
var guards: Array[Node2D] = []
var memories: Array[Node] = []
var selectors: Array[Node] = []
var decisions: Array[Node] = []
var phase := "warmup_without"
var frame_in_phase := 0
var last_usec := 0
var intervals := {"without": [], "with": []}
var step_ms := []  # the server's own step (NpcMindServer monitor server/step_ms), sampled after the timed frames
var rng := RandomNumberGenerator.new()
var memory_ids := PackedInt32Array()
var frame := 0
var selector_ids := PackedInt32Array()
var call_usec := {"record_event": 0, "awareness_of": 0, "evaluate": 0, "query_strongest": 0, "set_inputs": 0, "choice": 0}
var call_count := call_usec.duplicate()
var baseline_usec := call_usec.duplicate()
var baseline_count := call_usec.duplicate()
var chosen: Array[StringName] = []
## The GDScript baseline of the per-call table: the same calls on plain GDScript objects that do the
## equivalent Dictionary work (a memory per (entity, type) with the refractory rehearsal, R = e^(-t/S)
## and the awareness thresholds; 3 behaviors scored by a saturating curve, the best one chosen).
var gd_memories: Array[GdMemory] = []
var gd_selectors: Array[GdSelector] = []


class GdMemory:
	var rows := {}  # entity * 8 + type -> [last access, stability, rehearsals, salience]
	const BASE := [5.0, 30.0, 120.0, 600.0, 3600.0]

	func record_event(entity: int, memory_type: int, salience: float) -> void:
		var now := Time.get_ticks_msec() / 1000.0
		var key := entity * 8 + memory_type
		var row: Array = rows.get(key, [])
		if row.is_empty():
			rows[key] = [now, BASE[memory_type] * (0.5 + salience), 1, salience]
		elif now - row[0] >= 2.0:
			row[2] += 1
			row[3] = maxf(row[3], salience)
			row[1] = row[1] * (1.0 + 1.35 * log(1.0 + row[2]) * row[3])
			row[0] = now
		else:
			row[0] = now

	func _strongest(entity: int, now: float) -> Array:
		var best: Array = []
		var best_r := 0.05
		for memory_type in 5:
			var row: Array = rows.get(entity * 8 + memory_type, [])
			if not row.is_empty():
				var r := exp(-(now - row[0]) / row[1])
				if r > best_r:
					best_r = r
					best = [memory_type, r, row]
		return best

	func awareness_of(entity: int) -> int:
		var best := _strongest(entity, Time.get_ticks_msec() / 1000.0)
		if best.is_empty():
			return 0
		return 1 + int(best[1] > 0.3) + int(best[1] > 0.7)

	func query_strongest(entity: int) -> Dictionary:
		var now := Time.get_ticks_msec() / 1000.0
		var best := _strongest(entity, now)
		if best.is_empty():
			return {}
		var row: Array = best[2]
		row[0] = now
		row[2] += 1
		return {"entity": entity, "memory_type": best[0], "retrievability": best[1], "stability": row[1],
			"salience": row[3], "rehearsals": row[2]}


class GdSelector:
	var keys := [["calm", "threat"], ["threat", "noise"], ["noise", "calm"]]  # 3 behaviors x 2 considerations
	var names := [&"patrol", &"pursue", &"search"]
	var inputs := {}  # path nodes: what set_inputs stores, and the choice read back
	var choice := &"patrol"

	func set_inputs(values: Dictionary) -> void:
		inputs.merge(values, true)

	func evaluate(context: Dictionary) -> StringName:
		var best := -1.0
		var chosen := 0
		for i in 3:
			var score := 1.0
			for key in keys[i]:
				var x: float = context.get(key, 0.0)
				score *= x / (x + 0.5)
			if score > best:
				best = score
				chosen = i
		return names[chosen]


func _initialize() -> void:
	for argument in OS.get_cmdline_user_args():
		var parts := argument.trim_prefix("--").split("=")
		match parts[0]:
			"npcs": npcs = parts[1].to_int()
			"frames": frames = parts[1].to_int()
			"path": path = parts[1]
			"signals": signals = parts[1] != "off"
			"order": turns = parts[1] == "turns"
	rng.seed = 7
	for i in npcs:
		var guard := Node2D.new()
		guard.position = Vector2(rng.randf() * 1280.0, rng.randf() * 720.0)
		root.add_child(guard)
		guards.append(guard)


func _process(_delta: float) -> bool:
	var now := Time.get_ticks_usec()
	if last_usec > 0 and phase in ["without", "with"]:
		intervals[phase].append((now - last_usec) / 1000.0)
	last_usec = now
	frame_in_phase += 1
	_move_guards()
	if phase == "step":
		step_ms.append(NpcMindServer.get_metrics()["server/step_ms"])  # the frame before's step
	if phase.ends_with("with") or phase == "step":
		_mind_work()
	if phase == "with" and path in ["dictionary", "nodes"] and not turns and frame_in_phase == frames - 1:
		_recall_pass(memories)  # the frame before the timed recalls recalls the same guards
	if frame_in_phase >= (30 if phase.begins_with("warmup") or phase == "step" else frames):
		frame_in_phase = 0
		match phase:
			"warmup_without":
				phase = "without"
			"without":
				_add_minds()
				phase = "warmup_with"
			"warmup_with":
				phase = "with"
			"with":
				if path in ["dictionary", "nodes"] and not turns:
					_time_recalls(memories, call_usec, call_count)
					_time_baseline()
				if path != "gdscript":
					phase = "step"  # a few more frames of the same work, reading the server's step time
					return false
				return _report()
			"step":
				return _report()
	return false


func _report() -> bool:
	var per_call := {}
	for method in call_usec:
		if call_count[method] > 0:
			per_call[method] = float(call_usec[method]) / call_count[method]
	var baseline := {}
	for method in baseline_usec:
		if baseline_count[method] > 0:
			baseline[method] = float(baseline_usec[method]) / baseline_count[method]
	print(JSON.stringify({"npcs": npcs, "path": path, "signals": signals, "turns": turns, "frames": frames, "without": intervals["without"],
		"with": intervals["with"], "per_call_us": per_call, "baseline_per_call_us": baseline, "step_ms": step_ms}))
	return true


func _move_guards() -> void:
	## The game's own per-frame work, identical in both phases.
	for guard in guards:
		guard.position = (guard.position + Vector2(rng.randf() - 0.5, rng.randf() - 0.5)).clamp(Vector2.ZERO, Vector2(1280, 720))


func _add_minds() -> void:
	if path == "gdscript":
		_add_baseline_objects()
		return
	chosen.resize(npcs)
	var profile: Resource = ClassDB.instantiate("MemoryProfile")
	var behaviors := [behavior("patrol", ["calm", "threat"]), behavior("pursue", ["threat", "noise"]),
		behavior("search", ["noise", "calm"])]  # 3 behaviors x 2 considerations
	for guard in guards:
		var memory: Node = ClassDB.instantiate("MemoryStream")
		memory.profile = profile
		memory.emit_signals = signals
		var selector: Node = ClassDB.instantiate("UtilitySelector")
		selector.behaviors = behaviors
		var decision: Node = ClassDB.instantiate("AsyncLLMDecision")
		decision.allowed_intents = PackedStringArray(["patrol", "pursue", "search"])
		decision.fallback_selector = NodePath("../Selector")
		selector.name = "Selector"
		guard.add_child(memory)
		guard.add_child(selector)
		guard.add_child(decision)
		memories.append(memory)
		selectors.append(selector)
		decisions.append(decision)
		memory_ids.append(memory.get_server_id())
		selector_ids.append(selector.get_server_id())


func seen(guard: int, which: int) -> int:
	## Who guard `guard` sees: the crowd around it changes every 1.5-2 s.
	return (guard * 7 + frame / 120) % ENTITIES if which == 0 else (guard * 13 + frame / 90) % ENTITIES


func _mind_work() -> void:
	frame += 1
	if path == "gdscript":
		_dictionary_pass(gd_memories, gd_selectors, {}, baseline_count)
		return
	var asking := maxi(1, npcs / 300)
	for i in asking:
		decisions[rng.randi() % npcs].request_decision({"calm": 0.5, "threat": 0.5, "noise": 0.1})
	if path == "batched":
		var ids := PackedInt32Array()
		var entities := PackedInt64Array()
		var types := PackedInt32Array()
		var saliences := PackedFloat32Array()
		ids.resize(npcs * EVENTS_PER_GUARD)
		entities.resize(npcs * EVENTS_PER_GUARD)
		types.resize(npcs * EVENTS_PER_GUARD)
		saliences.resize(npcs * EVENTS_PER_GUARD)
		for row in npcs * EVENTS_PER_GUARD:
			var guard := row % npcs
			ids[row] = memory_ids[guard]
			entities[row] = seen(guard, row / npcs)
			types[row] = guard % 5
			saliences[row] = 0.5
		NpcMindServer.record_batch(ids, entities, types, saliences)
		var seen := entities.slice(0, npcs)
		var awareness: PackedInt32Array = NpcMindServer.awareness_batch(memory_ids, seen)
		var threat := PackedFloat32Array()
		threat.resize(npcs)
		for i in npcs:
			threat[i] = awareness[i] / 3.0
		var calm := PackedFloat32Array()
		calm.resize(npcs)
		calm.fill(0.5)
		NpcMindServer.set_inputs(selector_ids, &"threat", threat)
		NpcMindServer.set_inputs(selector_ids, &"calm", calm)
		NpcMindServer.set_inputs(selector_ids, &"noise", calm)
		NpcMindServer.get_choices(selector_ids)  # last frame's choices, as a game would read them
		if not signals:
			NpcMindServer.drain_memory_events()  # last frame's memory events, one read for the crowd
	else:
		_dictionary_pass(memories, selectors, call_usec if phase == "with" else {}, call_count)


func _dictionary_pass(mems: Array, sels: Array, usec: Dictionary, count: Dictionary) -> void:
	## One frame's per-node calls for every guard, on the nodes or on the GDScript baseline's objects
	## (both untyped here, so GDScript calls both the same way); timed into `usec` / `count` unless
	## `usec` is empty (the warm-up frames).
	if turns:
		for i in npcs:
			var memory: Object = mems[i]
			for event in EVENTS_PER_GUARD:
				memory.record_event(seen(i, event), i % 5, 0.5)
			sels[i].evaluate({"threat": memory.awareness_of(seen(i, 0)) / 3.0, "calm": 0.5, "noise": 0.5})
		return
	var started := Time.get_ticks_usec()
	for i in npcs:
		var memory: Object = mems[i]
		for event in EVENTS_PER_GUARD:
			memory.record_event(seen(i, event), i % 5, 0.5)
	var recorded := Time.get_ticks_usec()
	var levels := PackedInt32Array()
	levels.resize(npcs)
	for i in npcs:
		levels[i] = mems[i].awareness_of(seen(i, 0))
	var looked := Time.get_ticks_usec()
	if path == "nodes":
		for i in npcs:
			sels[i].set_inputs({"threat": levels[i] / 3.0, "calm": 0.5, "noise": 0.5})
		var fed := Time.get_ticks_usec()
		for i in npcs:
			chosen[i] = sels[i].choice  # made at the end of the last frame, from its inputs
		if not usec.is_empty():
			_count(usec, count, "set_inputs", fed - looked, npcs)
			_count(usec, count, "choice", Time.get_ticks_usec() - fed, npcs)
	else:
		for i in npcs:
			sels[i].evaluate({"threat": levels[i] / 3.0, "calm": 0.5, "noise": 0.5})
		if not usec.is_empty():
			_count(usec, count, "evaluate", Time.get_ticks_usec() - looked, npcs)
	if not usec.is_empty():
		_count(usec, count, "record_event", recorded - started, npcs * EVENTS_PER_GUARD)
		_count(usec, count, "awareness_of", looked - recorded, npcs)


func _count(usec: Dictionary, count: Dictionary, method: String, spent: int, calls: int) -> void:
	usec[method] += spent
	count[method] += calls


func _time_recalls(mems: Array, usec: Dictionary, count: Dictionary) -> void:
	## One recall per guard (it wakes the memory, so it is timed once, after the frames).
	var started := Time.get_ticks_usec()
	_recall_pass(mems)
	_count(usec, count, "query_strongest", Time.get_ticks_usec() - started, npcs)


func _recall_pass(mems: Array) -> void:
	for i in npcs:
		mems[i].query_strongest(seen(i, 0))


func _add_baseline_objects() -> void:
	## One GdMemory and one GdSelector per guard: the plain-GDScript version of its nodes.
	for i in npcs:
		gd_memories.append(GdMemory.new())
		gd_selectors.append(GdSelector.new())


func _time_baseline() -> void:
	## The Dictionary path's passes (loop, `seen` and argument building included) on the GDScript
	## objects, so the per-call table compares like with like in one run.
	_add_baseline_objects()
	var saved_frame := frame
	for repeat in 20:
		frame = saved_frame + repeat
		_dictionary_pass(gd_memories, gd_selectors, baseline_usec, baseline_count)
		_time_recalls(gd_memories, baseline_usec, baseline_count)


func behavior(behavior_name: String, keys: Array) -> Resource:
	var considerations := []
	for key in keys:
		var consideration: Resource = ClassDB.instantiate("UtilityConsideration")
		consideration.input_key = key
		consideration.curve_type = "saturating"
		consideration.curve_params = {"k": 0.5}
		considerations.append(consideration)
	var result: Resource = ClassDB.instantiate("UtilityBehavior")
	result.name = behavior_name
	result.considerations = considerations
	return result
