extends SceneTree
## SightSense3D in the real engine, physics on: the NPC faces -Z; the ray runs eye_height above the
## origins, so a floor on the occluder layer does not hide anyone; a wall does. Rules map groups and
## a property to types and saliences, the rate holds records, the last seen position is kept.

var frame := 0
var npc: CharacterBody3D
var memory: Node
var sight: Node
var people := {}
var marks := {}
var wall: StaticBody3D


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func box(size: Vector3, at: Vector3, layer: int) -> StaticBody3D:
	var made := StaticBody3D.new()
	var shape := CollisionShape3D.new()
	var cube := BoxShape3D.new()
	cube.size = size
	shape.shape = cube
	made.add_child(shape)
	made.position = at
	made.collision_layer = layer
	root.add_child(made)
	return made


func person(name: String, at: Vector3, group: String = "people", script: GDScript = null) -> CharacterBody3D:
	var made := CharacterBody3D.new()
	var shape := CollisionShape3D.new()
	var capsule := CapsuleShape3D.new()
	shape.shape = capsule
	shape.position = Vector3(0, 1, 0)
	made.add_child(shape)
	made.collision_layer = 1  # on the occluder layer: left out of its own ray
	made.collision_mask = 0
	if script != null:
		made.set_script(script)
	made.name = name
	made.position = at
	made.add_to_group(group)
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
	npc = CharacterBody3D.new()
	npc.name = "Guard"
	npc.collision_layer = 2
	root.add_child(npc)
	box(Vector3(100, 1, 100), Vector3(0, -0.5, 0), 1)  # the floor, on the occluder layer, top at y 0
	wall = box(Vector3(4, 4, 0.5), Vector3(6, 2, -8), 1)  # a wall between the guard and (9, 0, -12)
	var thief_script := GDScript.new()
	thief_script.source_code = "extends CharacterBody3D\nvar is_stealing := true\n"
	thief_script.reload()
	person("Ahead", Vector3(0, 0, -10))
	person("Hidden", Vector3(9, 0, -12))  # in range and in the cone
	person("Behind", Vector3(0, 0, 8))  # +Z: behind the guard
	person("Above", Vector3(0, 15, -1))  # in range, far outside the cone
	person("Far", Vector3(0, 0, -40))
	person("Thief", Vector3(-3, 0, -6), "thieves", thief_script)
	memory = ClassDB.instantiate("MemoryStream")
	npc.add_child(memory)


func _process(_delta: float) -> bool:
	frame += 1
	if frame == 3:
		sight = ClassDB.instantiate("SightSense3D")
		sight.view_range = 20.0
		sight.field_of_view = 100.0
		sight.record_interval = 0.5
		sight.rules = [rule("people", MemoryStream.OBSERVATION, 0.4),
			rule("thieves", MemoryStream.TRIVIA, 0.1), rule("thieves", MemoryStream.HOSTILE, 1.0, "is_stealing")]
		npc.add_child(sight)
		marks["records"] = NpcMindServer.get_metrics()["senses/records"]
	elif frame == 4:
		check("in the cone and range, above a floor on the occluder layer: recorded", kinds_of("Ahead") == [[MemoryStream.OBSERVATION, 0.4]], kinds_of("Ahead"))
		check("behind a wall: not recorded", kinds_of("Hidden").is_empty(), kinds_of("Hidden"))
		check("behind the guard (+Z): not recorded", kinds_of("Behind").is_empty(), kinds_of("Behind"))
		check("above the cone: not recorded", kinds_of("Above").is_empty(), kinds_of("Above"))
		check("out of range: not recorded", kinds_of("Far").is_empty(), kinds_of("Far"))
		check("groups and a property map to types and saliences", kinds_of("Thief") == [[MemoryStream.TRIVIA, 0.1], [MemoryStream.HOSTILE, 1.0]], kinds_of("Thief"))
		check("last seen position (the origin, not the eyes)", memory.get_last_known_position(people["Ahead"].get_instance_id()) == Vector3(0, 0, -10),
			memory.get_last_known_position(people["Ahead"].get_instance_id()))
		check("three records", NpcMindServer.get_metrics()["senses/records"] - marks["records"] == 3.0, NpcMindServer.get_metrics()["senses/records"] - marks["records"])
		npc.rotation_degrees = Vector3(0, 180, 0)  # now faces +Z
		wall.free()
		NpcMindServer.advance(0.25)
	elif frame == 5:
		var behind: int = people["Behind"].get_instance_id()
		check("turned around: the one behind is seen", kinds_of("Behind") == [[MemoryStream.OBSERVATION, 0.4]], kinds_of("Behind"))
		check("the rate: nothing else recorded within 0.5 s", NpcMindServer.get_metrics()["senses/records"] - marks["records"] == 4.0,
			NpcMindServer.get_metrics()["senses/records"] - marks["records"])
		check("a 3D position", memory.get_last_known_position(behind) == Vector3(0, 0, 8), memory.get_last_known_position(behind))
		npc.rotation_degrees = Vector3.ZERO
		NpcMindServer.advance(0.25)
	elif frame == 6:
		check("the wall gone: the one it hid is seen", kinds_of("Hidden") == [[MemoryStream.OBSERVATION, 0.4]], kinds_of("Hidden"))
		# at 0.5 s: Ahead and the thief's two rules again, and Hidden for the first time
		check("after record_interval: recorded again", NpcMindServer.get_metrics()["senses/records"] - marks["records"] == 8.0,
			NpcMindServer.get_metrics()["senses/records"] - marks["records"])
		for node in root.get_children():
			node.free()
		print(JSON.stringify({"done": true}))
		return true
	return false
