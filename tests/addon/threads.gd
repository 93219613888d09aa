extends SceneTree
## npc_mind's nodes and NpcMindServer are main-thread only: every call from a GDScript Thread is
## refused with one clear error (the pool is never touched from there), and a node freed on a
## thread has its server slot released on the main thread. Prints one JSON line per check; the
## test counts the refusals in the engine's error lines.

const ROUNDS := 200
var stream: Node
var spare: Node


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func hammer() -> void:
	for i in ROUNDS:
		stream.record_event(1000 + i, MemoryStream.OBSERVATION, 0.5)
	NpcMindServer.record_batch(PackedInt32Array([stream.get_server_id()]), PackedInt64Array([5]),
		PackedInt32Array([MemoryStream.TRIVIA]), PackedFloat32Array([0.5]))
	NpcMindServer.now()
	spare.awareness_of(5)  # a node outside the tree: the engine's own thread guard skips those


func free_spare() -> void:
	spare.free()


func _initialize() -> void:
	NpcMindServer.clock = "manual"
	var profile: Resource = ClassDB.instantiate("MemoryProfile")
	profile.capacity = 64
	stream = ClassDB.instantiate("MemoryStream")
	stream.profile = profile
	root.add_child(stream)
	spare = ClassDB.instantiate("MemoryStream")  # outside the tree, registered here
	spare.get_server_id()
	stream.get_server_id()
	var streams_before: float = NpcMindServer.get_monitor("memory/streams")
	var worker := Thread.new()
	worker.start(hammer)
	for i in ROUNDS:  # the main thread records at the same time
		stream.record_event(i, MemoryStream.OBSERVATION, 0.5)
	worker.wait_to_finish()
	var memories: Array = stream.get_memories()
	var entities := {}
	for memory in memories:
		entities[memory.entity_id] = true
	var from_main := entities.keys().all(func(e: int) -> bool: return e < ROUNDS)
	check("nothing the thread sent reached the pool", from_main and memories.size() == 64, [memories.size(), from_main])
	var freer := Thread.new()
	freer.start(free_spare)
	freer.wait_to_finish()
	NpcMindServer.advance(0.1)  # the release queued by the thread is done on the main thread
	var streams_after: float = NpcMindServer.get_monitor("memory/streams")
	check("a node freed on a thread releases its slot", streams_after == streams_before - 1, [streams_before, streams_after])
	print(JSON.stringify({"done": true}))
	quit(0)
