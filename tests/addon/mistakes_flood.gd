extends SceneTree
## Issue 22 (1, 2, 6): a teammate's mistakes in per-frame calls are each reported once per node and
## cause, and the NPC keeps working on the documented fallback. A typo in a consideration's input
## key (the game passes "hunger", the consideration reads "hungr"): SELECTORS selectors evaluated
## from untyped and typed GDScript for FRAMES frames, BATCHED selectors fed through set_input, and an
## AsyncLLMDecision (no endpoint) whose fallback_selector has the typo. A Node passed as an entity id
## to an untyped MemoryStream. One JSON line per check; the test counts the error lines.

const Build := preload("res://tests/addon/utility_builders.gd")
const SELECTORS := 50
const BATCHED := 10
const FRAMES := 120

var selectors: Array[Node] = []
var batched: Array[Node] = []
var memory: Node
var player: Node
var decision: Node
var frame := 0
var calls := 0
var chosen := 0  # calls that returned a behavior
var typed_ok := 0  # typed calls that returned a behavior
var fallbacks: Array = []


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func typo_selector() -> Node:
	var eat := Build.behavior("eat", [Build.consideration("hungr")])  # the typo
	var wander := Build.behavior("wander", [Build.consideration("boredom")])
	return Build.selector([eat, wander])


func _initialize() -> void:
	for i in SELECTORS:
		var selector := typo_selector()
		selector.name = "Mob%d" % i
		root.add_child(selector)
		selectors.append(selector)
	for i in BATCHED:
		var selector := typo_selector()
		selector.name = "Fed%d" % i
		root.add_child(selector)
		batched.append(selector)
	var npc := Node.new()
	npc.name = "Thinker"
	root.add_child(npc)
	var brain := typo_selector()
	brain.name = "Brain"
	npc.add_child(brain)
	decision = ClassDB.instantiate("AsyncLLMDecision")
	decision.name = "Decision"
	decision.allowed_intents = PackedStringArray(["eat", "wander"])
	decision.fallback_selector = NodePath("../Brain")
	decision.decision_fallback.connect(func(tier: int, reason: String) -> void: fallbacks.append([tier, reason]))
	npc.add_child(decision)
	memory = ClassDB.instantiate("MemoryStream")
	memory.name = "Memory"
	root.add_child(memory)
	player = Node.new()
	player.name = "Player"
	root.add_child(player)


func _process(_delta: float) -> bool:
	frame += 1
	if frame <= FRAMES:
		for selector in selectors:
			var untyped = selector.evaluate({"hunger": 0.9, "boredom": 0.2})
			calls += 1
			if untyped in [&"eat", &"wander"]:
				chosen += 1
			var typed: StringName = selector.evaluate({"hunger": 0.9, "boredom": 0.2})
			if typed == &"wander":  # "hungr" reads 0: wander wins
				typed_ok += 1
		for selector in batched:
			selector.set_input(&"hunger", 0.9)
			selector.set_input(&"boredom", 0.2)
		var stream = memory  # untyped, as a teammate's script would be
		stream.record_event(player, MemoryStream.HOSTILE, 0.9)
		stream.record_event("player", MemoryStream.HOSTILE, 0.9)  # no id at all: ignored
		if frame % 30 == 1:
			decision.request_decision({"hunger": 0.9, "boredom": 0.2})
		return false
	if frame < FRAMES + 5:
		return false  # the last requests end
	finish()
	return true


func finish() -> void:
	check("a behavior on every untyped call", chosen == calls and calls == SELECTORS * FRAMES, [chosen, calls])
	check("the missing input reads 0 for typed callers", typed_ok == SELECTORS * FRAMES, typed_ok)
	var choices := []
	for selector in batched:
		choices.append(selector.choice)
	check("the batched path chooses", choices.all(func(c: StringName) -> bool: return c == &"wander"), choices)
	var stream = memory
	var by_node: int = stream.awareness_of(player)
	var by_id: int = stream.awareness_of(player.get_instance_id())
	check("a Node as an entity id is remembered as its instance id", by_node == by_id and by_id > 0, [by_node, by_id])
	var recalled: Dictionary = stream.query_strongest(player)
	check("and recalled by it", recalled.get("entity_id", -1) == player.get_instance_id(), recalled)
	var reasons := fallbacks.map(func(f: Array) -> String: return f[1])
	check("the LLM decision falls back as no_endpoint, never internal_error",
		not reasons.is_empty() and reasons.all(func(r: String) -> bool: return r == "no_endpoint"), fallbacks)
	check("the fallback selector chose", decision.get_behavior() == &"wander", decision.get_behavior())
	var metrics: Dictionary = NpcMindServer.get_metrics()
	print(JSON.stringify({"metrics": {"reported": metrics["mistakes/reported"], "repeats": metrics["mistakes/repeats"]}}))
	print(JSON.stringify({"done": true}))
