extends SceneTree
## NpcMindServer's own rules: a rejected `clock` leaves the clock as it was (and reads back so), and
## advance() from a handler of one of the server's own signals is refused with one clear error
## instead of recursing. The test checks the engine printed exactly those two errors.

var stream: Node
var heard := []


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func on_formed(entity: int, _memory_type: int) -> void:
	heard.append(entity)
	if heard.size() == 1:
		stream.record_event(entity + 1, MemoryStream.TRIVIA, 0.5)
		NpcMindServer.advance(0.1)  # an update inside the update delivering this signal


func _initialize() -> void:
	NpcMindServer.clock = "manual"
	NpcMindServer.clock = "sundial"
	check("a rejected clock reads back the one in force", NpcMindServer.clock == "manual", NpcMindServer.clock)
	stream = ClassDB.instantiate("MemoryStream")
	root.add_child(stream)
	stream.memory_formed.connect(on_formed)
	stream.record_event(7, MemoryStream.TRIVIA, 0.5)
	NpcMindServer.advance(0.1)
	check("the re-entrant advance did not run", heard == [7] and is_equal_approx(NpcMindServer.now(), 0.1),
		[heard.size(), NpcMindServer.now()])
	NpcMindServer.advance(0.1)  # what the handler recorded forms in the next update, as usual
	check("the server works on", heard == [7, 8], heard)
	print(JSON.stringify({"done": true}))
	quit(0)
