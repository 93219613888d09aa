extends SceneTree
## Few-shot examples per AsyncLLMDecision node, against the endpoint in NPC_MIND_TEST_ENDPOINT (the
## test's fault server): two guards with the same examples and one with none each ask once (the test
## reads their prompts); a node whose example names an intent it may not answer is refused with that
## message when it joins the server (never a crash). Prints one JSON line per check.

const EXAMPLES := [
	{"situation": "a thief runs off with the gold", "intent": "attack", "urgency": 0.9},
	{"situation": "an army marches in", "intent": "flee"},
]

var ends := {}


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


## What every guard here shares: the same persona and intents (one hub, if the examples are equal).
func settings(examples: Array) -> Dictionary:
	return {"allowed_intents": PackedStringArray(["attack", "flee"]), "system_prompt": "a gate guard",
		"endpoint": OS.get_environment("NPC_MIND_TEST_ENDPOINT"), "soft_deadline_ms": 10000,
		"hard_deadline_ms": 20000, "examples": examples}


func decision(label: String, examples: Array) -> Node:
	var node: Node = ClassDB.instantiate("AsyncLLMDecision")
	node.name = label
	var wanted := settings(examples)
	for property: String in wanted:
		node.set(property, wanted[property])
	ends[label] = []
	node.decision_made.connect(func(_intent: StringName, _urgency: float, tier: int) -> void: ends[label].append(tier))
	node.decision_fallback.connect(func(tier: int, _reason: String) -> void: ends[label].append(tier))
	return node


func _initialize() -> void:
	var probe := decision("probe", EXAMPLES)
	check("the examples read back", probe.examples == EXAMPLES, probe.examples)
	probe.free()
	# Joining the server refuses the example: one error in the log, and the game goes on.
	root.add_child(decision("bad", [{"situation": "a dragon", "intent": "dance"}]))
	for label in ["first", "second", "plain"]:
		var node := decision(label, [] if label == "plain" else EXAMPLES)
		root.add_child(node)
		node.request_decision({"situation": "%s sees a stranger" % label})


func _process(_delta: float) -> bool:
	var waiting := ["first", "second", "plain"].filter(func(label: String) -> bool: return ends[label].is_empty())
	if not waiting.is_empty():
		return false
	check("every guard was answered", ends["first"].size() == 1 and ends["plain"].size() == 1, ends)
	print(JSON.stringify({"done": true}))
	return true
