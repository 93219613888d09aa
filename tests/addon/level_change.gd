extends SceneTree
## A level change that frees every child of root (the server's old per-frame ticker was one of them)
## must not stop the server: its clock keeps moving, a stream of the next level forgets on time and
## its signal arrives, and npc_mind puts no node of its own under root. Run with --fixed-fps 10.

var frame := 0
var played := 0.0  # the engine's own deltas since the level change
var marks := {}
var forgotten := []


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func _initialize() -> void:
	root.add_child(ClassDB.instantiate("MemoryStream"))  # the first level: the server starts ticking


func _process(delta: float) -> bool:
	frame += 1
	if frame >= 3 and frame < 24:  # the steps between the two marks (the server steps after this)
		played += delta
	match frame:
		3:
			for child in root.get_children():  # the level change
				child.free()
			marks["freed"] = NpcMindServer.now()
		4:
			check("npc_mind keeps no node under root", root.get_child_count() == 0, root.get_child_count())
			var profile: Resource = ClassDB.instantiate("MemoryProfile")
			profile.stability_trivia = 0.1  # S0 = 0.05 s at salience 0: forgotten within a second
			var stream: Node = ClassDB.instantiate("MemoryStream")
			stream.profile = profile
			root.add_child(stream)
			stream.memory_forgotten.connect(func(e: int, _t: int) -> void: forgotten.append(e))
			stream.record_event(42, 0, 0.0)
		24:
			var moved: float = NpcMindServer.now() - marks["freed"]
			check("the clock keeps moving after root's children are freed", absf(moved - played) < 1e-6, [moved, played])
			check("the next level's memory is forgotten and signalled", forgotten == [42], forgotten)
			print(JSON.stringify({"done": true}))
			return true
	return false
