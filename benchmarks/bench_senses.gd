extends SceneTree
## Frame-time benchmark of the senses (run by benchmarks/bench_senses.py, never by the tests).
## A 2D scene with occluders (a grid of walls, layer 1): N guards (turning a little every frame) and
## TARGETS people walking (group "people", one in 5 with is_stealing true). Run with --fixed-fps 60:
## each frame is 1/60 s on the clock (one physics step), frames run as fast as the engine goes.
## Three phases in one run, the same scene, each timed over F frames after a warm-up:
##   without: no senses (the game's own work);
##   gdscript: each guard has a MemoryStream, and one GDScript manager does the senses by hand: sight
##     at 10 Hz per guard (each guard at its own phase), range, field of view, one
##     PhysicsRayQueryParameters2D + intersect_ray per target in view, record_event at the
##     per-target rate and note_sighting; hearing of every stimulus with one ray per occluder;
##   nodes: the same with a SightSense2D and a HearingSense2D under each guard (new MemoryStreams).
## One stimulus every STIMULUS_EVERY frames (radius 400, occluders halve it), the same sequence in
## both phases. Prints one JSON line: frame intervals (ms) per phase and the sense totals.
##   --npcs=N --frames=F

const TARGETS := 50
const RANGE := 300.0
const FOV := 120.0
const RATE_HZ := 10.0
const RECORD_INTERVAL := 1.0
const STIMULUS_EVERY := 5
const STIMULUS_RADIUS := 400.0
const OCCLUDERS := 1
const GUARDS := 2
const PEOPLE := 4
const WARMUP := 30

var npcs := 200
var frames := 300
var size := 1000.0
var guards: Array[CharacterBody2D] = []
var people: Array[CharacterBody2D] = []
var streams: Array[Node] = []
var phase_names := ["without", "gdscript", "nodes"]
var phase_index := 0
var frame_in_phase := -WARMUP
var last_usec := 0
var intervals := {"without": [], "gdscript": [], "nodes": []}
var rng := RandomNumberGenerator.new()
var stimulus_rng := RandomNumberGenerator.new()
var totals := {}
var rules: Array = []
# the hand-written senses' state
var next_due := PackedFloat64Array()
var last_record := {}  # guard index * 65536 + target index * 2 + rule -> clock second
var clock := 0.0
var cos_half := cos(deg_to_rad(FOV) / 2.0)
var rays := 0
var hand_records := 0


func _initialize() -> void:
	for arg in OS.get_cmdline_user_args():
		if arg.begins_with("--npcs="):
			npcs = int(arg.get_slice("=", 1))
		elif arg.begins_with("--frames="):
			frames = int(arg.get_slice("=", 1))
	size = sqrt(float(npcs)) * 120.0
	rng.seed = 7
	var cells := int(size / 200.0)
	for i in cells:
		for j in cells:
			var wall := StaticBody2D.new()
			var shape := CollisionShape2D.new()
			var rect := RectangleShape2D.new()
			rect.size = Vector2(120, 16) if (i + j) % 2 == 0 else Vector2(16, 120)
			shape.shape = rect
			wall.add_child(shape)
			wall.position = Vector2((i + 0.5) * size / cells, (j + 0.5) * size / cells)
			wall.collision_layer = OCCLUDERS
			root.add_child(wall)
	var thief := GDScript.new()
	thief.source_code = "extends CharacterBody2D\nvar is_stealing := true\n"
	thief.reload()
	var honest := GDScript.new()
	honest.source_code = "extends CharacterBody2D\nvar is_stealing := false\n"
	honest.reload()
	for i in TARGETS:
		var person := body(PEOPLE)
		person.set_script(thief if i % 5 == 0 else honest)
		person.add_to_group("people")
		root.add_child(person)
		people.append(person)
	for i in npcs:
		var guard := body(GUARDS)
		guard.rotation = rng.randf() * TAU
		root.add_child(guard)
		guards.append(guard)
	var watch: Resource = ClassDB.instantiate("SenseRule")
	watch.group = "people"
	watch.memory_type = MemoryStream.OBSERVATION
	watch.salience = 0.3
	var theft: Resource = ClassDB.instantiate("SenseRule")
	theft.group = "people"
	theft.memory_type = MemoryStream.HOSTILE
	theft.salience = 0.9
	theft.when = "is_stealing"
	rules = [watch, theft]


func body(layer: int) -> CharacterBody2D:
	var made := CharacterBody2D.new()
	var shape := CollisionShape2D.new()
	var circle := CircleShape2D.new()
	circle.radius = 8.0
	shape.shape = circle
	made.add_child(shape)
	made.collision_layer = layer
	made.collision_mask = 0
	made.position = Vector2(rng.randf() * size, rng.randf() * size)
	return made


func game_work() -> void:
	# the game's own work, the same in every phase: people walk, guards turn
	for i in people.size():
		var person := people[i]
		person.position += Vector2.from_angle(i * 0.7 + clock * 0.3) * 1.5
		person.position = person.position.posmod(size)
	for guard in guards:
		guard.rotation += 0.01


static func cpu_seconds() -> float:
	## this process's user + system CPU time (Linux /proc; -1 elsewhere): robust to a shared machine
	var file := FileAccess.open("/proc/self/stat", FileAccess.READ)
	if file == null:
		return -1.0
	var stat := file.get_line()  # (the file reports no size: read by line)
	var fields := stat.substr(stat.rfind(")") + 2).split(" ")
	return (int(fields[11]) + int(fields[12])) / 100.0  # utime, stime in clock ticks (USER_HZ 100)


func memory_count() -> int:
	var count := 0
	for stream in streams:
		count += stream.get_memories().size()
	return count


func start_phase(name: String) -> void:
	for stream in streams:
		stream.get_parent().remove_child(stream)
		stream.free()
	streams.clear()
	for child_guard in guards:
		for child in child_guard.get_children():
			if not child is CollisionShape2D:
				child_guard.remove_child(child)
				child.free()
	stimulus_rng.seed = 11
	if name == "without":
		return
	for guard in guards:
		var stream: Node = ClassDB.instantiate("MemoryStream")
		guard.add_child(stream)
		streams.append(stream)
	if name == "gdscript":
		next_due.resize(npcs)
		for i in npcs:
			next_due[i] = clock + fmod(i * 0.6180339887498949, 1.0) / RATE_HZ  # the same spread as the nodes
		last_record.clear()
	elif name == "nodes":
		for guard in guards:
			var sight: Node = ClassDB.instantiate("SightSense2D")
			sight.view_range = RANGE
			sight.field_of_view = FOV
			sight.occluder_mask = OCCLUDERS
			sight.rate_hz = RATE_HZ
			sight.record_interval = RECORD_INTERVAL
			sight.rules = rules
			guard.add_child(sight)
			var ears: Node = ClassDB.instantiate("HearingSense2D")
			ears.occlusion_mask = OCCLUDERS
			ears.occlusion_factor = 0.5
			guard.add_child(ears)


func stimulus() -> Array:
	## [position, source]: the same sequence in each phase
	var at := Vector2(stimulus_rng.randf() * size, stimulus_rng.randf() * size)
	return [at, people[stimulus_rng.randi() % TARGETS]]


# --- the senses by hand -------------------------------------------------------------------------
func hand_sight(space: PhysicsDirectSpaceState2D) -> void:
	var seen_people := get_nodes_in_group("people")
	for i in npcs:
		if next_due[i] > clock:
			continue
		next_due[i] += 1.0 / RATE_HZ
		if next_due[i] <= clock:
			next_due[i] = clock + 1.0 / RATE_HZ
		var guard := guards[i]
		var eye := guard.global_position
		var facing := guard.global_transform.x.normalized()
		var memory: Node = streams[i]
		for j in seen_people.size():
			var target: Node2D = seen_people[j]
			var at := target.global_position
			var offset := at - eye
			if offset.length_squared() > RANGE * RANGE or facing.dot(offset) < cos_half * offset.length():
				continue
			rays += 1
			var query := PhysicsRayQueryParameters2D.create(eye, at, OCCLUDERS, [guard.get_rid(), target.get_rid()])
			if not space.intersect_ray(query).is_empty():
				continue
			var id := target.get_instance_id()
			var key := i * 65536 + j * 2
			if clock - last_record.get(key, -INF) >= RECORD_INTERVAL:
				last_record[key] = clock
				memory.record_event(id, MemoryStream.OBSERVATION, 0.3)
				hand_records += 1
			if target.is_stealing and clock - last_record.get(key + 1, -INF) >= RECORD_INTERVAL:
				last_record[key + 1] = clock
				memory.record_event(id, MemoryStream.HOSTILE, 0.9)
				hand_records += 1
			memory.note_sighting(id, at)


func hand_hearing(space: PhysicsDirectSpaceState2D, at: Vector2, source: Node2D) -> void:
	var id := source.get_instance_id()
	for i in npcs:
		var guard := guards[i]
		var distance := guard.global_position.distance_to(at)
		if distance >= STIMULUS_RADIUS:
			continue
		var exclude: Array[RID] = [guard.get_rid(), source.get_rid()]
		var hits := 0
		while hits < 4:
			rays += 1
			var hit := space.intersect_ray(PhysicsRayQueryParameters2D.create(at, guard.global_position, OCCLUDERS, exclude))
			if hit.is_empty():
				break
			hits += 1
			exclude.append(hit.rid)
		var salience := 0.8 * (1.0 - distance / STIMULUS_RADIUS) * pow(0.5, hits)
		if salience >= 0.01:
			streams[i].record_event(id, MemoryStream.HOSTILE, salience)
			hand_records += 1
			streams[i].note_sighting(id, at)


func _process(delta: float) -> bool:
	var now := Time.get_ticks_usec()
	var name: String = phase_names[phase_index]
	if last_usec > 0 and frame_in_phase > 0:
		intervals[name].append((now - last_usec) / 1000.0)
	last_usec = now
	if frame_in_phase == 0:
		totals[name + "_cpu_start"] = cpu_seconds()
	if frame_in_phase == -WARMUP:
		start_phase(name)
		if name == "nodes":
			totals["before_nodes"] = NpcMindServer.get_metrics()
	clock += delta
	game_work()
	var space := root.get_world_2d().direct_space_state
	if name == "gdscript":
		hand_sight(space)
	var every := (frame_in_phase + WARMUP) % STIMULUS_EVERY == 0
	if every and name != "without":
		var emitted := stimulus()
		if name == "gdscript":
			hand_hearing(space, emitted[0], emitted[1])
		else:
			NpcMindServer.emit_stimulus(emitted[0], STIMULUS_RADIUS, MemoryStream.HOSTILE, 0.8, emitted[1])
	frame_in_phase += 1
	if frame_in_phase > frames:
		totals[name + "_cpu"] = (cpu_seconds() - totals[name + "_cpu_start"]) * 1000.0 / frames
		totals[name + "_memories"] = memory_count()
		if name == "gdscript":
			totals["gdscript_rays"] = rays
			totals["gdscript_records"] = hand_records
		phase_index += 1
		frame_in_phase = -WARMUP
		last_usec = 0
		if phase_index == phase_names.size():
			var after: Dictionary = NpcMindServer.get_metrics()
			var before: Dictionary = totals["before_nodes"]
			print(JSON.stringify({"npcs": npcs, "frames": frames, "targets": TARGETS,
				"without": intervals["without"], "gdscript": intervals["gdscript"], "nodes": intervals["nodes"],
				"gdscript_rays": totals["gdscript_rays"], "gdscript_records": totals["gdscript_records"],
				"gdscript_memories": totals["gdscript_memories"], "nodes_memories": totals["nodes_memories"],
				"cpu_ms": {"without": totals["without_cpu"], "gdscript": totals["gdscript_cpu"], "nodes": totals["nodes_cpu"]}, "nodes_rays": after["senses/rays"] - before["senses/rays"],
				"nodes_records": after["senses/records"] - before["senses/records"],
				"nodes_checks": after["senses/checks"] - before["senses/checks"]}))
			start_phase("without")
			return true
	return false
