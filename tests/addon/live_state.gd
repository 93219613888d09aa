extends SceneTree
## The nodes' read-only "Live" properties (what the Remote inspector shows of a running game): a
## MemoryStream's memory count and strongest memories, a UtilitySelector's behavior and scores, an
## AsyncLLMDecision's pending request; shown in the editor, never stored, empty before registering.
## One JSON line per check.


const Build := preload("res://tests/addon/utility_builders.gd")


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func usage_of(object: Object, property: String) -> int:
	for info: Dictionary in object.get_property_list():
		if info.name == property:
			return info.usage
	return -1


func _initialize() -> void:
	NpcMindServer.clock = "manual"
	var guard := Node2D.new()
	var memory: Node = ClassDB.instantiate("MemoryStream")
	var selector := Build.selector([Build.behavior("attack", [Build.consideration("threat")])])
	var decision: Node = ClassDB.instantiate("AsyncLLMDecision")
	check("before registering: empty", memory.live_memory_count == 0 and memory.live_strongest.is_empty() and selector.live_scores.is_empty() and decision.live_pending == false)
	decision.allowed_intents = PackedStringArray(["attack"])
	# An endpoint nothing listens on: the request goes out and is pending (with none it ends at once).
	decision.endpoint = "http://127.0.0.1:9/v1"
	for node in [memory, selector, decision]:
		guard.add_child(node)
	root.add_child(guard)
	var thief := Node2D.new()
	thief.name = "Tam"
	root.add_child(thief)
	memory.record_event(thief.get_instance_id(), MemoryStream.HOSTILE, 0.9)
	memory.record_event(99, MemoryStream.TRIVIA, 0.2)
	NpcMindServer.advance(1.0)
	var strongest: PackedStringArray = memory.live_strongest
	check("memory count", memory.live_memory_count == 2, memory.live_memory_count)
	check("strongest first, named", strongest.size() == 2 and strongest[0].begins_with("Tam hostile: R 0.99") and strongest[1].begins_with("99 trivia"), strongest)
	selector.evaluate({"threat": 0.7})
	check("behavior and scores", selector.live_behavior == &"attack" and is_equal_approx(selector.live_scores.get("attack", -1.0), 0.7), [selector.live_behavior, selector.live_scores])
	decision.request_decision({"threat": 0.7})
	check("pending request", decision.live_pending == true)
	var flags := PROPERTY_USAGE_EDITOR | PROPERTY_USAGE_READ_ONLY
	var usages := [usage_of(memory, "live_memory_count"), usage_of(selector, "live_scores"), usage_of(decision, "live_pending")]
	var ok := true
	for usage: int in usages:
		ok = ok and (usage & flags) == flags and (usage & PROPERTY_USAGE_STORAGE) == 0
	check("read-only, shown, never stored", ok, usages)
	print(JSON.stringify({"done": true}))
	quit()
