extends SceneTree
## Drives tests/test_debugger_feed.py: one guard, "Aldric" (a MemoryStream, a UtilitySelector and an
## AsyncLLMDecision with no endpoint, so every request is an immediate tier-3 fallback), remembers a
## thief node and an entity id that is no object, and runs for RUN_SECONDS of wall time (the feed is
## throttled by wall time) while the threat rises, so the chosen behavior changes. Prints one JSON
## line with the ids at the start and one with the feed's state at the end.

const Build := preload("res://tests/addon/utility_builders.gd")
const RUN_SECONDS := 3.0
const PLAIN_ENTITY := 12345

var guard: Node2D
var memory: Node
var selector: Node
var decision: Node
var started_msec := 0
var asked_at := -1.0


func behavior(behavior_name: String, key: String, invert: bool) -> Resource:
	var consideration := Build.consideration(key)
	consideration.invert = invert
	return Build.behavior(behavior_name, [consideration])


func _initialize() -> void:
	guard = Node2D.new()
	guard.name = "Aldric"
	memory = ClassDB.instantiate("MemoryStream")
	memory.name = "Memory"
	guard.add_child(memory)
	selector = Build.selector([behavior("attack", "threat", false), behavior("idle", "threat", true)])
	selector.name = "Selector"
	guard.add_child(selector)
	decision = ClassDB.instantiate("AsyncLLMDecision")
	decision.name = "Decision"
	decision.allowed_intents = PackedStringArray(["attack", "idle"])
	decision.fallback_selector = NodePath("../Selector")
	guard.add_child(decision)
	root.add_child(guard)
	var thief := Node2D.new()
	thief.name = "Tam"
	root.add_child(thief)
	memory.record_event(thief.get_instance_id(), MemoryStream.HOSTILE, 0.9)
	memory.record_event(PLAIN_ENTITY, MemoryStream.TRIVIA, 0.2)
	print(JSON.stringify({"guard": guard.get_instance_id(), "thief": thief.get_instance_id(), "plain": PLAIN_ENTITY}))
	started_msec = Time.get_ticks_msec()


func _process(_delta: float) -> bool:
	var t := (Time.get_ticks_msec() - started_msec) / 1000.0
	var threat := clampf(t / RUN_SECONDS, 0.0, 1.0)
	selector.evaluate({"threat": threat})
	if t - asked_at >= 0.5 and not decision.is_pending():
		decision.request_decision({"threat": threat})
		asked_at = t
	if t < RUN_SECONDS:
		return false
	var feed := root.get_node_or_null("NpcMindDebugFeed")
	if feed != null:
		feed.process_mode = Node.PROCESS_MODE_DISABLED  # nothing more is sent after the count below
	var monitor_types := {}
	var names := Performance.get_custom_monitor_names()
	var types := Performance.get_custom_monitor_types()
	for index in names.size():
		if names[index].begins_with("npc_mind/"):
			monitor_types[names[index]] = types[index]
	var parts := {}  # the last frame's times by part, as the server keeps them
	for name in NpcMindServer.get_monitor_names():
		if name.begins_with("server/") and name.ends_with("_ms"):
			parts[name] = NpcMindServer.get_monitor(name)
	print(JSON.stringify({"monitor_types": monitor_types, "step_s": Performance.get_custom_monitor("npc_mind/server/step_ms"),
		"step_ms": NpcMindServer.get_monitor("server/step_ms"), "parts": parts}))
	print(JSON.stringify({
		"active": EngineDebugger.is_active(),
		"feed": feed != null,
		"capture": EngineDebugger.has_capture("npc_mind"),
		"sent": feed.get_sent_count() if feed != null else 0,
	}))
	return true
