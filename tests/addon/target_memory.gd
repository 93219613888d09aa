extends SceneTree
## A UtilitySelector's target from memory (target_from = "memory"): the entity of the strongest
## memory of the chosen types, read without waking it; when it fades the other becomes the target;
## a freed target's node reads null while its id and last known position stay. set_target() for
## scripts. One JSON line per check.

const Build := preload("res://tests/addon/utility_builders.gd")
const OBSERVATION_AND_HOSTILE := 2 | 8  # the inspector's flags: bit t is MemoryStream type t

var changes: Array = []


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func _initialize() -> void:
	NpcMindServer.clock = "manual"
	var npc := Node2D.new()
	var memory: Node = ClassDB.instantiate("MemoryStream")
	var selector: Node = Build.selector([Build.behavior("idle", [Build.consideration("calm")])])
	check("no target by default", selector.target_from == "none" and selector.get_target_id() == 0
		and not selector.has_target() and selector.get_target_node() == null and selector.get_target_position() == null)
	selector.target_from = "memory"
	selector.target_memory_types = OBSERVATION_AND_HOSTILE
	npc.add_child(memory)
	npc.add_child(selector)
	root.add_child(npc)
	await process_frame  # in the tree: the selector joins the server
	selector.target_changed.connect(func(entity: int) -> void: changes.append(entity))
	var thief := Node2D.new()
	var passer := Node2D.new()
	var bird := Node2D.new()
	root.add_child(thief)
	root.add_child(passer)
	root.add_child(bird)
	var thief_id := thief.get_instance_id()
	var passer_id := passer.get_instance_id()
	# The thief: hostile, slow to fade (S = 600 x 0.8). The passer-by, seen 20 s later: an
	# observation at full strength but quick to fade (S = 30 x 1.4). A bird (trivia), seen last, is
	# not a type that makes a target.
	memory.record_event(thief_id, MemoryStream.HOSTILE, 0.3)
	memory.note_sighting(thief_id, Vector2(10, 0))
	NpcMindServer.advance(20.0)
	memory.record_event(passer_id, MemoryStream.OBSERVATION, 0.9)
	memory.note_sighting(passer_id, Vector2(0, 5))
	memory.record_event(bird.get_instance_id(), MemoryStream.TRIVIA, 1.0)
	NpcMindServer.advance(0.5)
	check("the strongest memory of the chosen types is the target", selector.get_target_id() == passer_id
		and selector.get_target_node() == passer and selector.get_target_position() == Vector2(0, 5),
		[selector.get_target_id(), passer_id, thief_id])
	passer.name = "Passer"
	check("the Remote inspector shows the target", selector.live_target == "Passer (%d)" % passer_id, selector.live_target)
	var recalls_before := _recall_counts(memory)
	NpcMindServer.advance(60.0)
	check("when it fades the other becomes the target", selector.get_target_id() == thief_id
		and selector.get_target_position() == Vector2(10, 0), [selector.get_target_id(), thief_id])
	check("target_changed named each new target, once", changes == [thief_id, passer_id, thief_id], changes)
	var recalls_after := _recall_counts(memory)
	check("choosing a target never wakes a memory", recalls_after.size() == 2
		and recalls_after.all(func(row: Array) -> bool: return row in recalls_before), [recalls_after, recalls_before])
	thief.free()
	NpcMindServer.advance(0.1)
	check("a freed target: no node, the id and last known position stay", selector.get_target_node() == null
		and selector.get_target_id() == thief_id and selector.has_target()
		and selector.get_target_position() == Vector2(10, 0))
	# a floor above the thief's R: nobody is the target
	selector.target_min_retrievability = 0.95
	NpcMindServer.advance(0.1)
	check("below the floor there is no target", selector.get_target_id() == 0 and not selector.has_target()
		and changes.back() == 0, changes)
	selector.target_from = "none"
	selector.set_target(passer_id)
	NpcMindServer.advance(0.1)
	check("set_target sets it and signals; target_from none keeps it", selector.get_target_id() == passer_id
		and changes.back() == passer_id and changes.size() == 5, changes)
	# target_from scoring: the best target of a per-target behavior, its entity from target_ids
	var per_target: Resource = Build.consideration("threat")
	per_target.per_target = true
	var scorer: Node = Build.selector([Build.behavior("attack", [per_target]), Build.behavior("idle", [Build.consideration("calm")])])
	scorer.target_from = "scoring"
	npc.add_child(scorer)
	var chosen: StringName = scorer.evaluate({"threat": [0.2, 0.9, 0.4], "target_ids": [11, 22, 33], "calm": 0.1})
	check("target_from scoring: the chosen target's entity", chosen == &"attack" and scorer.get_target_id() == 22,
		[chosen, scorer.get_target_id()])
	print(JSON.stringify({"done": true}))
	quit()


func _recall_counts(memory: Node) -> Array:
	var counts := []
	for view in memory.get_memories():
		counts.append([view.entity_id, view.recall_count])
	return counts
