extends SceneTree
## SightSense2D.recall_on_spot in the real engine, physics on: a target coming into view is first
## recalled (its strongest memory, woken as MemoryStream.query_strongest wakes it) and `recalled`
## tells what was remembered, with R before the wake; a target still in view is not recalled again,
## one that comes back after being hidden is; someone never remembered gives no signal, and with
## recall_on_spot off nothing is recalled. Manual clock. One JSON line a check.

var frame := 0
var npc: CharacterBody2D
var memory: Node
var sight: Node
var people := {}
var recalled := []
var marks := {}


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func person(label: String, at: Vector2) -> Node2D:
	var made := Node2D.new()
	made.name = label
	made.position = at
	made.add_to_group("people")
	root.add_child(made)
	people[label] = made
	return made


func hostile_r() -> float:
	for m: Dictionary in memory.get_memories():
		if m.entity_id == people["Thief"].get_instance_id() and m.memory_type == MemoryStream.HOSTILE:
			return m.retrievability
	return -1.0


func _initialize() -> void:
	NpcMindServer.clock = "manual"
	npc = CharacterBody2D.new()
	npc.name = "Guard"
	root.add_child(npc)
	var wall := StaticBody2D.new()
	var shape := CollisionShape2D.new()
	var rect := RectangleShape2D.new()
	rect.size = Vector2(20, 60)
	shape.shape = rect
	wall.add_child(shape)
	wall.position = Vector2(100, 70)  # hides (200, 100) from the guard at the origin
	root.add_child(wall)
	person("Thief", Vector2(200, 0))
	person("Stranger", Vector2(0, 200))
	memory = ClassDB.instantiate("MemoryStream")
	npc.add_child(memory)
	memory.record_event(people["Thief"].get_instance_id(), MemoryStream.HOSTILE, 0.9)  # a theft, long ago


func _process(_delta: float) -> bool:
	frame += 1
	if frame == 2:
		NpcMindServer.advance(300.0)  # five minutes later
	elif frame == 3:
		sight = ClassDB.instantiate("SightSense2D")
		var seen: Resource = ClassDB.instantiate("SenseRule")
		seen.group = &"people"
		seen.memory_type = MemoryStream.OBSERVATION
		seen.salience = 0.3
		sight.rules = [seen]
		sight.view_range = 300.0
		sight.field_of_view = 360.0
		sight.recall_on_spot = true
		sight.recalled.connect(func(entity: int, type: int, r: float) -> void: recalled.append([entity, type, r]))
		npc.add_child(sight)
		marks["r"] = hostile_r()
	elif frame == 4:  # the first check ran at the end of frame 3
		var thief: int = people["Thief"].get_instance_id()
		check("a target coming into view is recalled: its strongest memory, R before the wake",
			recalled.size() == 1 and recalled[0][0] == thief and recalled[0][1] == MemoryStream.HOSTILE
			and is_equal_approx(snappedf(recalled[0][2], 0.0001), snappedf(marks.r, 0.0001)) and marks.r < 0.8, [recalled, marks])
		check("the recall woke the memory", hostile_r() > 0.999, hostile_r())
		check("someone never remembered gives no signal, and is recorded", memory.get_memories().any(
			func(m: Dictionary) -> bool: return m.entity_id == people["Stranger"].get_instance_id()), memory.get_memories())
		NpcMindServer.advance(0.125)
	elif frame == 5:
		check("still in view: not recalled again", recalled.size() == 1, recalled)
		people["Thief"].position = Vector2(200, 100)  # behind the wall
		NpcMindServer.advance(0.125)
	elif frame == 6:
		people["Thief"].position = Vector2(200, 0)  # back in view
		NpcMindServer.advance(0.125)
	elif frame == 7:
		check("back in view after being hidden: recalled again", recalled.size() == 2
			and recalled[1][1] == MemoryStream.HOSTILE and recalled[1][2] > 0.99, recalled)
		sight.recall_on_spot = false
		people["Thief"].position = Vector2(200, 100)
		NpcMindServer.advance(0.125)
	elif frame == 8:
		people["Thief"].position = Vector2(200, 0)
		NpcMindServer.advance(0.125)
	elif frame == 9:
		check("recall_on_spot off: nothing is recalled", recalled.size() == 2, recalled)
		print(JSON.stringify({"done": true}))
		return true
	return false
