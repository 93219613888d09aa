extends SceneTree
## HearingSense2D/3D and TouchSense2D in the real engine, physics on. A stimulus (one call, or a
## Stimulus2D node) is recorded by every hearing sense within its radius with salience
## s x (1 - d / r), halved by each occluder of the listener's mask, not beyond the radius, and not by
## its own source; the source is the entity and the stimulus' position is its last known position.
## A body entering a TouchSense2D is recorded per the rules.

var frame := 0
var listeners := {}
var thrower: Node2D
var bumper: CharacterBody2D
var toucher: Node2D
var touch: Area2D
var marks := {}


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func listener(name: String, at: Variant, muffled: bool = false) -> Node:
	var npc: Node = Node2D.new() if at is Vector2 else Node3D.new()
	npc.name = name
	npc.position = at
	root.add_child(npc)
	npc.add_child(ClassDB.instantiate("MemoryStream"))
	var ears: Node = ClassDB.instantiate("HearingSense2D" if at is Vector2 else "HearingSense3D")
	if muffled:
		ears.occlusion_mask = 1
		ears.occlusion_factor = 0.5
	npc.add_child(ears)
	listeners[name] = npc
	return npc


func memories(name: String) -> Array:
	var found := []
	var stream: Node = listeners[name].get_child(0) if name in listeners else toucher.get_child(0)
	for m in stream.get_memories():
		found.append([m.entity_id, m.memory_type, snappedf(m.salience, 0.0001)])
	return found


func same(found: Array, expected: Array) -> bool:
	## [entity, type, salience] rows, saliences within float32 precision
	if found.size() != expected.size():
		return false
	for i in found.size():
		if found[i][0] != expected[i][0] or found[i][1] != expected[i][1] or absf(found[i][2] - expected[i][2]) > 1e-4:
			return false
	return true


func wall(at: Vector2, size: Vector2) -> void:
	var made := StaticBody2D.new()
	var shape := CollisionShape2D.new()
	var rect := RectangleShape2D.new()
	rect.size = size
	shape.shape = rect
	made.add_child(shape)
	made.position = at
	root.add_child(made)


func _initialize() -> void:
	NpcMindServer.clock = "manual"
	thrower = Node2D.new()
	thrower.name = "Thrower"
	thrower.position = Vector2(-500, -500)
	root.add_child(thrower)
	listener("Near", Vector2(0, 0))
	listener("Muffled", Vector2(100, 300), true)
	listener("Open", Vector2(100, -300), true)  # same mask, nothing in between
	listener("Twice", Vector2(-100, 300), true)
	listener("Out", Vector2(1000, 0))
	listener("Ears3D", Vector3(100, 0, 0))
	wall(Vector2(100, 150), Vector2(100, 20))  # between (100, 0) and Muffled
	wall(Vector2(0, 150), Vector2(60, 20))  # with the next one, between (100, 0) and Twice
	wall(Vector2(-50, 250), Vector2(60, 20))
	toucher = Node2D.new()
	toucher.name = "Toucher"
	toucher.position = Vector2(0, 2000)
	root.add_child(toucher)
	toucher.add_child(ClassDB.instantiate("MemoryStream"))
	touch = ClassDB.instantiate("TouchSense2D")
	var shape := CollisionShape2D.new()
	var circle := CircleShape2D.new()
	circle.radius = 50.0
	shape.shape = circle
	touch.add_child(shape)
	touch.collision_layer = 0
	touch.collision_mask = 4
	var rule: Resource = ClassDB.instantiate("SenseRule")
	rule.group = "people"
	rule.memory_type = MemoryStream.INTERACTION
	rule.salience = 0.7
	touch.rules = [rule]
	toucher.add_child(touch)
	bumper = CharacterBody2D.new()
	bumper.name = "Bumper"
	var bumper_shape := CollisionShape2D.new()
	bumper_shape.shape = CircleShape2D.new()
	bumper.add_child(bumper_shape)
	bumper.collision_layer = 4
	bumper.add_to_group("people")
	bumper.position = Vector2(400, 2000)
	root.add_child(bumper)


func _process(_delta: float) -> bool:
	frame += 1
	var source: int = thrower.get_instance_id()
	if frame == 3:
		NpcMindServer.emit_stimulus(Vector2(100, 0), 400.0, "hostile", 0.8, thrower)
		NpcMindServer.emit_stimulus(Vector3(100, 0, 3), 10.0, MemoryStream.TRIVIA, 0.5, 77)
	elif frame == 4:
		# Near: d 100 of 400 -> 0.8 x 0.75; Muffled: d 300 -> 0.8 x 0.25 x 0.5 (one wall);
		# Open: d 300, no wall -> 0.2; Twice: d 316.2 -> 0.8 x (1 - 316.23/400) x 0.25 (two walls)
		check("in range: attenuated by distance", same(memories("Near"), [[source, MemoryStream.HOSTILE, 0.6]]), memories("Near"))
		check("one occluder halves it", same(memories("Muffled"), [[source, MemoryStream.HOSTILE, 0.1]]), memories("Muffled"))
		check("the same mask with nothing in between", same(memories("Open"), [[source, MemoryStream.HOSTILE, 0.2]]), memories("Open"))
		var twice := snappedf(0.8 * (1.0 - Vector2(-100, 300).distance_to(Vector2(100, 0)) / 400.0) * 0.25, 0.0001)
		check("two occluders: a factor each", same(memories("Twice"), [[source, MemoryStream.HOSTILE, twice]]), [memories("Twice"), twice])
		check("out of range: nothing", memories("Out").is_empty(), memories("Out"))
		check("3D: an id as the source, 1 - 3/10", same(memories("Ears3D"), [[77, MemoryStream.TRIVIA, 0.35]]), memories("Ears3D"))
		check("where it was heard", listeners["Near"].get_child(0).get_last_known_position(source) == Vector2(100, 0),
			listeners["Near"].get_child(0).get_last_known_position(source))
		var heard: Array = listeners["Near"].get_child(1).get_recent_perceptions()
		check("recent perceptions name the source", heard.size() == 1 and heard[0].name == "Thrower" and heard[0].recorded, heard)
		# a Stimulus2D on the listener itself: its own noise is not heard; one on the thrower is
		var own: Node2D = ClassDB.instantiate("Stimulus2D")
		own.radius = 50.0
		own.emit_on_ready = true
		listeners["Near"].add_child(own)
		var stone: Node2D = ClassDB.instantiate("Stimulus2D")
		stone.radius = 2000.0
		stone.kind = MemoryStream.OBSERVATION
		stone.salience = 1.0
		thrower.add_child(stone)
		stone.emit()
		marks["near"] = listeners["Near"].get_child(1).get_recent_perceptions().size()
		bumper.position = Vector2(20, 2000)  # into the touch area
		NpcMindServer.advance(0.1)
	elif frame == 5:
		var near: Array = memories("Near")
		var expected := snappedf(1.0 - Vector2(-500, -500).distance_to(Vector2.ZERO) / 2000.0, 0.0001)
		check("a Stimulus2D: heard from its parent, as its kind", same(near, [[source, MemoryStream.OBSERVATION, expected], [source, MemoryStream.HOSTILE, 0.6]]), [near, expected])
		check("its own noise is not heard", listeners["Near"].get_child(1).get_recent_perceptions().size() == marks["near"] + 1,
			listeners["Near"].get_child(1).get_recent_perceptions())
		NpcMindServer.advance(0.1)
	elif frame >= 6 and frame < 12:
		NpcMindServer.advance(0.1)
		if memories("Toucher").size() > 0 and not marks.has("touched"):
			marks["touched"] = frame
	elif frame == 12:
		check("a body entering the area is recorded per the rules",
			same(memories("Toucher"), [[bumper.get_instance_id(), MemoryStream.INTERACTION, 0.7]]), memories("Toucher"))
		check("where it touched", toucher.get_child(0).get_last_known_position(bumper.get_instance_id()) == Vector2(20, 2000))
		var felt: Array = touch.get_recent_perceptions()
		check("staying: perceived at each check, recorded once within record_interval",
			felt.size() > 2 and felt.filter(func(p: Dictionary) -> bool: return p.recorded).size() == 1, felt.size())
		for node in root.get_children():
			node.free()
		print(JSON.stringify({"done": true}))
		return true
	return false
