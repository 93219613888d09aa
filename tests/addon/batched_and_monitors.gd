extends SceneTree
## The batched path (packed arrays over node ids) agrees with the per-node Dictionary path, selectors
## sharing a definition are chosen for in one batch at the end of the frame, and the plugin's
## monitors read the server's numbers. Prints one JSON line per check.

const GUARDS := 50
var memories: Array[Node] = []
var selectors: Array[Node] = []
var changed := 0


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func _initialize() -> void:
	NpcMindServer.clock = "manual"
	var profile: Resource = ClassDB.instantiate("MemoryProfile")
	for i in GUARDS:
		var memory: Node = ClassDB.instantiate("MemoryStream")
		memory.profile = profile
		var selector: Node = ClassDB.instantiate("UtilitySelector")
		selector.behaviors = [behavior("patrol", "calm"), behavior("pursue", "threat")]
		selector.behavior_changed.connect(func(_name: StringName) -> void: changed += 1)
		root.add_child(memory)
		root.add_child(selector)
		memories.append(memory)
		selectors.append(selector)
	var ids := PackedInt32Array()
	var entities := PackedInt64Array()
	var types := PackedInt32Array()
	var saliences := PackedFloat32Array()
	for i in GUARDS:
		ids.append(memories[i].get_server_id())
		entities.append(1000 + i % 3)
		types.append(MemoryStream.HOSTILE if i % 2 == 0 else MemoryStream.TRIVIA)
		saliences.append(0.9 if i % 2 == 0 else 0.1)
	NpcMindServer.record_batch(ids, entities, types, saliences)
	NpcMindServer.advance(20.0)
	var batch: PackedInt32Array = NpcMindServer.awareness_batch(ids, entities)
	var single := PackedInt32Array()
	for i in GUARDS:
		single.append(memories[i].awareness_of(entities[i]))
	check("awareness batch equals per node", batch == single and batch[0] == 3 and batch[1] == 0, [batch[0], batch[1]])
	var recalled: Dictionary = NpcMindServer.query_strongest_batch(ids.slice(0, 2), entities.slice(0, 2))
	check("recall batch", recalled.memory_type[0] == MemoryStream.HOSTILE and recalled.memory_type[1] == -1
		and recalled.retrievability[0] > 0.9, recalled)

	var selector_ids := PackedInt32Array()
	var threat := PackedFloat32Array()
	var calm := PackedFloat32Array()
	for i in GUARDS:
		selector_ids.append(selectors[i].get_server_id())
		threat.append(batch[i] / 3.0)
		calm.append(0.5)
	NpcMindServer.set_inputs(selector_ids, &"threat", threat)
	NpcMindServer.set_inputs(selector_ids, &"calm", calm)
	NpcMindServer.advance(0.0)  # the batched update: one choice per definition
	var choices: PackedInt32Array = NpcMindServer.get_choices(selector_ids)
	var names: PackedStringArray = selectors[0].get_behavior_names()
	check("batched choices", names[choices[0]] == "pursue" and names[choices[1]] == "patrol"
		and changed == GUARDS, {"names": names, "first": [choices[0], choices[1]], "signals": changed})
	# Game saves: one stream's memories into another.
	var saved: PackedByteArray = memories[0].save_state()
	memories[2].load_state(saved)
	check("save_state / load_state", saved.size() > 0 and memories[2].get_memories() == memories[0].get_memories(),
		saved.size())
	# Reparenting keeps memories: the slot lives as long as the node, not its place in the tree.
	var before: Array = memories[0].get_memories()
	var holder := Node.new()
	root.add_child(holder)
	memories[0].reparent(holder)
	check("reparenting keeps memories", memories[0].get_memories() == before and not before.is_empty())
	# A new profile at run time moves the stream to that profile's pool, memories included.
	var forgetful: Resource = ClassDB.instantiate("MemoryProfile")
	forgetful.stability_hostile = 60.0
	memories[4].profile = forgetful
	var moved: Array = memories[4].get_memories()
	check("profile switch keeps memories", moved.size() == 1 and moved[0].entity_id == entities[4],
		moved)
	# A Godot Curve on a table consideration is baked to points: a designer's hand-drawn response.
	var curve := Curve.new()
	curve.add_point(Vector2(0.0, 0.0))
	curve.add_point(Vector2(0.5, 1.0))
	curve.add_point(Vector2(1.0, 0.0))
	var drawn: Resource = ClassDB.instantiate("UtilityConsideration")
	drawn.input_key = &"noise"
	drawn.curve_type = "table"
	drawn.curve = curve
	var middle: Resource = ClassDB.instantiate("UtilityBehavior")
	middle.name = "listen"
	middle.considerations = [drawn]
	var listener: Node = ClassDB.instantiate("UtilitySelector")
	listener.behaviors = [middle, behavior("patrol", "calm")]
	root.add_child(listener)
	var quiet: StringName = listener.evaluate({"noise": 0.0, "calm": 0.4})
	var heard: StringName = listener.evaluate({"noise": 0.5, "calm": 0.4})
	check("a Godot Curve baked to a table", quiet == &"patrol" and heard == &"listen", listener.get_scores())
	curve.set_point_value(1, 0.2)  # the designer flattens the curve: it is baked again
	check("an edited Curve is baked again", listener.evaluate({"noise": 0.5, "calm": 0.4}) == &"patrol",
		listener.get_scores())
	# Freeing a node frees its slot in the pool.
	var streams_before: float = NpcMindServer.get_monitor("memory/streams")
	memories[GUARDS - 1].free()
	memories.pop_back()
	check("freeing a node frees its slot", NpcMindServer.get_monitor("memory/streams") == streams_before - 1,
		[streams_before, NpcMindServer.get_monitor("memory/streams")])
	var metrics: Dictionary = NpcMindServer.get_metrics()
	check("one pool per profile, one group per definition", metrics["memory/pools"] == 2
		and metrics["selectors/groups"] == 2, metrics)


func _process(_delta: float) -> bool:
	# The plugin's monitors autoload is in the tree from the first frame on.
	var monitor_ok := Performance.has_custom_monitor("npc_mind/memory/streams")
	var streams: float = Performance.get_custom_monitor("npc_mind/memory/streams") if monitor_ok else -1.0
	check("monitors", monitor_ok and streams == GUARDS - 1, streams)
	print(JSON.stringify({"done": true}))
	return true


func behavior(behavior_name: String, key: String) -> Resource:
	var consideration: Resource = ClassDB.instantiate("UtilityConsideration")
	consideration.input_key = key
	consideration.curve_type = "linear"
	var result: Resource = ClassDB.instantiate("UtilityBehavior")
	result.name = behavior_name
	result.considerations = [consideration]
	return result
