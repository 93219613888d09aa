extends SceneTree
## The first slice, driven from GDScript headless: a guard built from the three nodes by class name
## records a theft; the server's manual clock moves; awareness falls from pursue to search to puzzled
## on the schedule R = e^(-t/S) gives (S = 600 s x (0.5 + 0.9) for a hostile memory of salience 0.9),
## and the memory is forgotten, once, at the analytic forget time. Prints one JSON line per check.

const THIEF := 1 << 40  # instance ids exceed 2^32
const SALIENCE := 0.9

var forgotten: Array = []
var changes: Array = []


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func _initialize() -> void:
	var server: Object = Engine.get_singleton("NpcMindServer")
	server.clock = "manual"
	check("clock", server.clock == "manual" and server.now() == 0.0, server.clock)

	var guard := Node2D.new()
	guard.name = "Guard"
	var memory: Node = ClassDB.instantiate("MemoryStream")
	memory.name = "Memory"
	var selector: Node = ClassDB.instantiate("UtilitySelector")
	selector.name = "Selector"
	selector.behaviors = [behavior("pursue", 1.0), behavior("search", 2.0 / 3.0), behavior("puzzled", 1.0 / 3.0)]
	var decision: Node = ClassDB.instantiate("AsyncLLMDecision")
	decision.name = "Decision"
	decision.allowed_intents = PackedStringArray(["pursue", "search", "puzzled"])
	decision.fallback_selector = NodePath("../Selector")
	for node: Node in [memory, selector, decision]:
		guard.add_child(node)
	root.add_child(guard)
	memory.memory_forgotten.connect(func(entity_id: int, memory_type: int) -> void:
		forgotten.append([server.now(), entity_id, memory_type]))
	selector.behavior_changed.connect(func(behavior_name: StringName) -> void: changes.append(String(behavior_name)))
	check("classes", memory.is_class("MemoryStream") and selector.is_class("UtilitySelector")
		and decision.is_class("AsyncLLMDecision"), [memory.get_class(), selector.get_class(), decision.get_class()])

	memory.record_event(THIEF, MemoryStream.HOSTILE, SALIENCE)
	var stability := 600.0 * (0.5 + SALIENCE)
	var to_search := stability * log(1.0 / 0.8)  # R = e^(-t/S) reaches 0.8
	var to_puzzled := stability * log(1.0 / 0.3)
	var to_forget := stability * log(1.0 / 0.05)
	var schedule := [
		[90.0, MemoryStream.AWARENESS_PURSUE, "pursue"],
		[to_search - 1.0, MemoryStream.AWARENESS_PURSUE, "pursue"],
		[to_search + 1.0, MemoryStream.AWARENESS_SEARCH, "search"],
		[to_puzzled - 1.0, MemoryStream.AWARENESS_SEARCH, "search"],
		[to_puzzled + 1.0, MemoryStream.AWARENESS_PUZZLED, "puzzled"],
		[to_forget - 1.0, MemoryStream.AWARENESS_PUZZLED, "puzzled"],
		[to_forget + 1.0, MemoryStream.AWARENESS_NONE, ""],
	]
	for step: Array in schedule:
		server.advance(step[0] - server.now())
		var level: int = memory.awareness_of(THIEF)
		var memories: Array = memory.get_memories()
		var expected_r := exp(-server.now() / stability)
		var r: float = memories[0].retrievability if not memories.is_empty() else 0.0
		var behavior := ""
		if level > 0:
			behavior = String(selector.evaluate({"threat": level / 3.0}))
		check("awareness at %.1f s" % server.now(), level == step[1] and behavior == step[2] and
			(memories.is_empty() or absf(r - expected_r) < 1e-6),
			{"t": server.now(), "awareness": level, "R": r, "expected_R": expected_r, "behavior": behavior})
	check("forgotten once at the analytic time", forgotten.size() == 1 and forgotten[0][1] == THIEF
		and forgotten[0][2] == MemoryStream.HOSTILE, forgotten)
	check("behavior followed awareness", changes == ["pursue", "search", "puzzled"], changes)
	check("recall after forgetting is empty", memory.query_strongest(THIEF).is_empty())
	check("selector scores", selector.get_scores().has("puzzled"), selector.get_scores())
	print(JSON.stringify({"done": true}))
	quit(0)


func behavior(behavior_name: String, centre: float) -> Resource:
	## A behavior whose score peaks when the threat input equals `centre` (awareness / 3).
	var consideration: Resource = ClassDB.instantiate("UtilityConsideration")
	consideration.input_key = &"threat"
	consideration.curve_type = "normal"
	consideration.curve_params = {"c": centre, "k": 0.1}
	var result: Resource = ClassDB.instantiate("UtilityBehavior")
	result.name = behavior_name
	result.considerations = [consideration]
	return result
