extends SceneTree
## SightSense2D in the real engine, physics on: what is in range, in the field of view and not
## behind an occluder is recorded per the rules (group -> type and salience, a property or meta
## condition), at the per-target rate, and where it was last seen is kept. Manual clock: each step
## advances 0.125 s and the sense (10 Hz) checks once at the end of the frame. One JSON line a check.

var frame := 0
var npc: CharacterBody2D
var memory: Node
var sight: Node
var people := {}
var marks := {}


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func body(at: Vector2, layer: int, radius: float) -> CharacterBody2D:
	var made := CharacterBody2D.new()
	var shape := CollisionShape2D.new()
	var circle := CircleShape2D.new()
	circle.radius = radius
	shape.shape = circle
	made.add_child(shape)
	made.collision_layer = layer
	made.collision_mask = 0
	made.position = at
	return made


func person(name: String, at: Vector2, script: GDScript = null) -> Node2D:
	var made: Node2D = body(at, 1, 8.0)  # on the occluder layer: the sight must leave the target's own body out
	if script != null:
		made.set_script(script)
	made.name = name
	made.add_to_group("people")
	root.add_child(made)
	people[name] = made
	return made


func rule(group: String, type: int, salience: float, when: String = "") -> Resource:
	var made: Resource = ClassDB.instantiate("SenseRule")
	made.group = group
	made.memory_type = type
	made.salience = salience
	made.when = when
	return made


func kinds_of(who: String) -> Array:
	var found := []
	for m in memory.get_memories():
		if m.entity_id == people[who].get_instance_id():
			found.append([m.memory_type, snappedf(m.salience, 0.001)])
	found.sort()
	return found


func _initialize() -> void:
	NpcMindServer.clock = "manual"
	npc = body(Vector2.ZERO, 2, 10.0)  # faces +X (rotation 0)
	npc.name = "Guard"
	root.add_child(npc)
	var wall := StaticBody2D.new()
	var wall_shape := CollisionShape2D.new()
	var rect := RectangleShape2D.new()
	rect.size = Vector2(20, 60)
	wall_shape.shape = rect
	wall.add_child(wall_shape)
	wall.position = Vector2(100, 70)  # spans y 40..100 at x 90..110
	wall.collision_layer = 1
	root.add_child(wall)
	var thief_script := GDScript.new()
	thief_script.source_code = "extends CharacterBody2D\nvar is_stealing := true\n"
	thief_script.reload()
	person("Visible", Vector2(200, 0))
	person("Hidden", Vector2(200, 100))  # the ray crosses the wall at (100, 50)
	person("Behind", Vector2(-150, 0))  # in range, outside the 90 degree view
	person("Far", Vector2(500, 0))  # in view, out of range
	person("Thief", Vector2(150, -60), thief_script)  # a property: is_stealing true
	var meta_person := person("Meta", Vector2(150, 30))
	meta_person.set_meta("is_stealing", false)  # a meta: false for now
	memory = ClassDB.instantiate("MemoryStream")
	npc.add_child(memory)


func add_sight() -> void:
	sight = ClassDB.instantiate("SightSense2D")
	sight.view_range = 300.0
	sight.field_of_view = 90.0
	sight.occluder_mask = 1
	sight.record_interval = 1.0
	sight.rules = [rule("people", MemoryStream.OBSERVATION, 0.3), rule("people", MemoryStream.HOSTILE, 0.9, "is_stealing")]
	npc.add_child(sight)


func _process(_delta: float) -> bool:
	frame += 1
	if frame == 3:  # the bodies are in the physics space
		add_sight()
		check("no configuration warning when wired", NpcMindDesigner.get_configuration_warnings(sight).is_empty(),
			NpcMindDesigner.get_configuration_warnings(sight))
		marks["records"] = NpcMindServer.get_metrics()["senses/records"]
	elif frame == 4:  # one check ran at the end of frame 3 (the first phase is 0)
		check("a target in the cone and range is recorded, its own body left out", kinds_of("Visible") == [[MemoryStream.OBSERVATION, 0.3]], kinds_of("Visible"))
		check("a target behind an occluder is not", kinds_of("Hidden").is_empty(), kinds_of("Hidden"))
		check("a target outside the field of view is not", kinds_of("Behind").is_empty(), kinds_of("Behind"))
		check("a target out of range is not", kinds_of("Far").is_empty(), kinds_of("Far"))
		check("a property condition maps to its own type and salience", kinds_of("Thief") == [[MemoryStream.OBSERVATION, 0.3], [MemoryStream.HOSTILE, 0.9]], kinds_of("Thief"))
		check("a false meta condition does not hold", kinds_of("Meta") == [[MemoryStream.OBSERVATION, 0.3]], kinds_of("Meta"))
		var visible_id: int = people["Visible"].get_instance_id()
		check("the last seen position is kept", memory.get_last_known_position(visible_id) == Vector2(200, 0), memory.get_last_known_position(visible_id))
		check("never seen: no position", memory.get_last_known_position(people["Hidden"].get_instance_id()) == null)
		check("four records in one frame", NpcMindServer.get_metrics()["senses/records"] - marks["records"] == 4.0,
			NpcMindServer.get_metrics()["senses/records"] - marks["records"])
		marks["records"] = NpcMindServer.get_metrics()["senses/records"]
		people["Visible"].position = Vector2(220, 10)
		people["Meta"].set_meta("is_stealing", true)
		NpcMindServer.advance(0.125)
	elif frame == 5:
		var visible_id: int = people["Visible"].get_instance_id()
		check("the last seen position follows the target", memory.get_last_known_position(visible_id) == Vector2(220, 10), memory.get_last_known_position(visible_id))
		check("a meta turned true holds at the next check", kinds_of("Meta") == [[MemoryStream.OBSERVATION, 0.3], [MemoryStream.HOSTILE, 0.9]], kinds_of("Meta"))
		check("within the interval only the new rule records", NpcMindServer.get_metrics()["senses/records"] - marks["records"] == 1.0,
			NpcMindServer.get_metrics()["senses/records"] - marks["records"])
		people["Visible"].position = Vector2(200, 100)  # behind the wall now
		NpcMindServer.advance(0.125)
	elif frame >= 6 and frame < 11:
		NpcMindServer.advance(0.125)  # checks at 0.375 .. 0.875 s: seen, but the rate holds the records
	elif frame == 11:
		var visible_id: int = people["Visible"].get_instance_id()
		check("hidden again: the last seen position stays", memory.get_last_known_position(visible_id) == Vector2(220, 10), memory.get_last_known_position(visible_id))
		check("seconds since seen grows", is_equal_approx(memory.get_seconds_since_seen(visible_id), 0.875 - 0.125), memory.get_seconds_since_seen(visible_id))
		check("the rate is honored: no record within record_interval", NpcMindServer.get_metrics()["senses/records"] - marks["records"] == 1.0,
			NpcMindServer.get_metrics()["senses/records"] - marks["records"])
		var recent: Array = sight.get_recent_perceptions()
		var thief_id: int = people["Thief"].get_instance_id()
		var thief_seen := recent.filter(func(p: Dictionary) -> bool: return p.entity == thief_id and p.type == MemoryStream.HOSTILE)
		check("recent perceptions: every check, one recorded", thief_seen.size() == 8 and thief_seen.filter(func(p: Dictionary) -> bool: return p.recorded).size() == 1
			and thief_seen[0].name == "Thief", thief_seen.size())
		NpcMindServer.advance(0.125)  # 1.0 s: the interval has passed
	elif frame == 12:
		var records: float = NpcMindServer.get_metrics()["senses/records"] - marks["records"]
		# at 1.0 s: the thief's two rules and the meta person's observation (its hostile, first
		# recorded at 0.125 s, not yet); the visible one is hidden now
		check("after record_interval the seen targets record again", records == 1.0 + 3.0, records)
		sight.get_parent().remove_child(sight)
		sight.free()
		print(JSON.stringify({"done": true}))
		return true
	return false
