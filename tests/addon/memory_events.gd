extends SceneTree
## Per-memory signals can be turned off per stream (`emit_signals = false`) for crowds: such a stream
## emits none, while its events (and every other stream's) are in the one batched read,
## `NpcMindServer.drain_memory_events()`. A stream with signals on behaves as before. One JSON line
## per check.

var heard := {"loud": [], "quiet": []}


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func listen(memory: Node, key: String) -> void:
	memory.memory_formed.connect(func(e: int, t: int) -> void: heard[key].append(["formed", e, t]))
	memory.memory_rehearsed.connect(func(e: int, t: int) -> void: heard[key].append(["rehearsed", e, t]))
	memory.memory_forgotten.connect(func(e: int, t: int) -> void: heard[key].append(["forgotten", e, t]))
	memory.memory_evicted.connect(func(e: int, t: int) -> void: heard[key].append(["evicted", e, t]))


func rows(events: Dictionary) -> Array:
	var out := []
	for i in events.kind.size():
		out.append([events.kind[i], events.id[i], events.entity_id[i], events.memory_type[i]])
	return out


func _initialize() -> void:
	NpcMindServer.clock = "manual"
	var loud: Node = ClassDB.instantiate("MemoryStream")
	var quiet: Node = ClassDB.instantiate("MemoryStream")
	check("emit_signals defaults to true", loud.emit_signals == true)
	quiet.emit_signals = false
	root.add_child(loud)
	root.add_child(quiet)
	listen(loud, "loud")
	listen(quiet, "quiet")
	var loud_id: int = loud.get_server_id()
	var quiet_id: int = quiet.get_server_id()
	NpcMindServer.drain_memory_events()  # nothing from before
	loud.record_event(7, MemoryStream.TRIVIA, 0.0)
	quiet.record_event(7, MemoryStream.TRIVIA, 0.0)
	quiet.record_event(8, MemoryStream.HOSTILE, 0.9)
	NpcMindServer.advance(0.1)
	var events: Dictionary = NpcMindServer.drain_memory_events()
	check("packed arrays", typeof(events.kind) == TYPE_PACKED_INT32_ARRAY and typeof(events.id) == TYPE_PACKED_INT32_ARRAY
		and typeof(events.entity_id) == TYPE_PACKED_INT64_ARRAY and typeof(events.memory_type) == TYPE_PACKED_INT32_ARRAY,
		[typeof(events.kind), typeof(events.id), typeof(events.entity_id), typeof(events.memory_type)])
	var formed := rows(events)
	var expected := [[MemoryStream.EVENT_FORMED, loud_id, 7, MemoryStream.TRIVIA],
		[MemoryStream.EVENT_FORMED, quiet_id, 7, MemoryStream.TRIVIA],
		[MemoryStream.EVENT_FORMED, quiet_id, 8, MemoryStream.HOSTILE]]
	check("every stream's events in one batched read", formed == expected, formed)
	check("a stream with signals on emits as before", heard["loud"] == [["formed", 7, MemoryStream.TRIVIA]], heard["loud"])
	check("a stream with signals off emits none", heard["quiet"].is_empty(), heard["quiet"])
	check("a second read is empty", NpcMindServer.drain_memory_events().kind.is_empty())
	# Trivia at salience 0 has S = 2.5 s: forgotten at 2.5 ln(20) = 7.49 s, on the loud stream by signal,
	# on the quiet one only in the batched read.
	NpcMindServer.advance(10.0)
	var forgotten := rows(NpcMindServer.drain_memory_events())
	check("forgotten in the batched read", forgotten == [[MemoryStream.EVENT_FORGOTTEN, loud_id, 7, MemoryStream.TRIVIA],
		[MemoryStream.EVENT_FORGOTTEN, quiet_id, 7, MemoryStream.TRIVIA]], forgotten)
	check("forgotten by signal only when on", heard["loud"].size() == 2 and heard["loud"][1] == ["forgotten", 7, 0]
		and heard["quiet"].is_empty(), heard)
	# Switching signals back on at run time: the next events are signals again.
	quiet.emit_signals = true
	quiet.record_event(9, MemoryStream.OBSERVATION, 0.5)
	NpcMindServer.advance(0.1)
	var again := rows(NpcMindServer.drain_memory_events())
	check("signals back on", heard["quiet"] == [["formed", 9, MemoryStream.OBSERVATION]]
		and again == [[MemoryStream.EVENT_FORMED, quiet_id, 9, MemoryStream.OBSERVATION]], [heard["quiet"], again])
	loud.free()
	quiet.free()
	print(JSON.stringify({"done": true}))
	quit(0)
