extends SceneTree
## A run-time MemoryProfile change is transactional: a rejected profile (capacity 0, NaN alpha, an
## unknown curve, a capacity too small for the memories held, a non-profile object) raises one error
## and leaves the stream exactly as it was (memories, the profile read back, its settings); a valid one
## moves every memory, keeping the stream's id; edits to the assigned profile's fields take effect.
## One JSON line per check; the Python test counts the engine errors the rejections print.

var formed := 0


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func profile(capacity: int, hostile: float = 600.0) -> Resource:
	var made: Resource = ClassDB.instantiate("MemoryProfile")
	made.capacity = capacity
	made.stability_hostile = hostile
	return made


func memories(stream: Node) -> Array:
	## what must survive a move exactly (R is recomputed from the age, so it is compared apart)
	var out := []
	for m: Dictionary in stream.get_memories():
		out.append([m.entity_id, m.memory_type, m.stability, m.salience, m.recall_count])
	out.sort()
	return out


func stability_of(stream: Node, entity: int) -> float:
	for m: Dictionary in stream.get_memories():
		if m.entity_id == entity:
			return m.stability
	return -1.0


func _initialize() -> void:
	NpcMindServer.clock = "manual"
	var stream: Node = ClassDB.instantiate("MemoryStream")
	var eight := profile(8)
	stream.profile = eight
	root.add_child(stream)
	stream.memory_formed.connect(func(_e: int, _t: int) -> void: formed += 1)
	var id: int = stream.get_server_id()
	for e in 5:
		stream.record_event(e + 1, MemoryStream.HOSTILE, 0.9)
	NpcMindServer.advance(1.0)
	var before := memories(stream)
	check("five memories", before.size() == 5 and formed == 5, [before, formed])

	var zero := profile(0)
	var nan_alpha := profile(8)
	nan_alpha.alpha = NAN
	var linear := profile(8)
	linear.curve = "linear"
	var three := profile(3)
	var rejected := {"capacity 0": zero, "NaN alpha": nan_alpha, "unknown curve": linear,
		"capacity 3 for 5 memories": three, "a Node": Node.new()}
	for what: String in rejected:
		print(JSON.stringify({"rejecting": what}))
		stream.profile = rejected[what]
		check("rejected, unchanged: " + what, stream.profile == eight and memories(stream) == before
			and stream.get_server_id() == id, [memories(stream), stream.profile])
	rejected["a Node"].free()

	# a valid profile: every memory moves, the id stays, the new settings apply
	var sixteen := profile(16, 1000.0)
	stream.profile = sixteen
	check("moved, memories kept", stream.profile == sixteen and memories(stream) == before
		and stream.get_server_id() == id, memories(stream))
	stream.record_event(100, MemoryStream.HOSTILE, 0.5)
	check("new profile's settings", is_equal_approx(stability_of(stream, 100), 1000.0), stability_of(stream, 100))
	NpcMindServer.advance(1.0)
	check("a move announces nothing again", formed == 6, formed)

	# an edit of the assigned profile's fields takes effect, memories kept
	sixteen.stability_hostile = 2000.0
	stream.record_event(101, MemoryStream.HOSTILE, 0.5)
	check("an edited field applies", is_equal_approx(stability_of(stream, 101), 2000.0), stability_of(stream, 101))
	check("the edit kept the memories", memories(stream).size() == 7, memories(stream))
	var seven := memories(stream)
	print(JSON.stringify({"rejecting": "an edit to capacity 2"}))
	sixteen.capacity = 2
	check("a rejected edit changes nothing", memories(stream) == seven and stream.get_server_id() == id, memories(stream))
	sixteen.capacity = 16
	stream.record_event(102, MemoryStream.HOSTILE, 0.5)
	check("still on the last valid settings", is_equal_approx(stability_of(stream, 102), 2000.0), stability_of(stream, 102))

	# back to the first profile: everything comes along; the old profile's edits no longer apply
	stream.profile = eight
	var eight_memories := memories(stream)
	check("back, memories kept", eight_memories.size() == 8, eight_memories)
	sixteen.stability_hostile = 50.0
	check("the previous profile is no longer watched", memories(stream) == eight_memories, memories(stream))
	stream.record_event(103, MemoryStream.HOSTILE, 0.5)
	check("the first profile's settings", is_equal_approx(stability_of(stream, 103), 600.0), stability_of(stream, 103))

	# before entering the tree: a rejected profile is refused at once, the stream uses the defaults
	var fresh: Node = ClassDB.instantiate("MemoryStream")
	print(JSON.stringify({"rejecting": "capacity 0 before the tree"}))
	fresh.profile = zero
	root.add_child(fresh)
	var fresh_formed := []
	fresh.memory_formed.connect(func(e: int, _t: int) -> void: fresh_formed.append(e))
	fresh.record_event(1, MemoryStream.HOSTILE, 0.5)
	check("refused before the tree", fresh.profile == null and is_equal_approx(stability_of(fresh, 1), 600.0),
		[fresh.profile, fresh.get_memories()])
	# a move between an event and the frame's update: the event's signal still comes, once
	fresh.profile = sixteen
	NpcMindServer.advance(1.0)
	check("an event before a move is announced once", fresh_formed == [1], fresh_formed)
	stream.free()
	fresh.free()
	# the inspector ranges, for the Python side to compare with MemoryParams' own bounds
	var hints := {}
	for property: Dictionary in ClassDB.class_get_property_list("MemoryProfile", true):
		if property.hint == PROPERTY_HINT_RANGE:
			hints[property.name] = property.hint_string
	print(JSON.stringify({"hints": hints}))
	print(JSON.stringify({"done": true}))
	quit(0)
