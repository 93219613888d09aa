extends SceneTree
## AsyncLLMDecision.priority under overload, against the endpoint in NPC_MIND_TEST_ENDPOINT (the test's
## fault server: one slot, 0.2 s an answer). One node asks first, so the endpoint's service time is
## measured; then seven nodes ask in the same frame, more than the slot and the queue can answer in
## time: those answered must be the highest priorities, the rest end at once as queue_full or shed.
## "late" is made with priority -5 and raised to 9 once in the tree (the change reaches its server
## entry). Prints one JSON line per check.

var ends := {}
var nodes := {}
var frame := 0
var burst := false


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func decision(label: String, priority: int) -> Node:
	var node: Node = ClassDB.instantiate("AsyncLLMDecision")
	node.name = label
	node.allowed_intents = PackedStringArray(["attack", "flee"])
	node.endpoint = OS.get_environment("NPC_MIND_TEST_ENDPOINT") + "#mode=schema"
	node.soft_deadline_ms = 600
	node.hard_deadline_ms = 1200
	node.priority = priority
	root.add_child(node)
	ends[label] = []
	nodes[label] = node
	node.decision_made.connect(func(_intent: StringName, _urgency: float, _tier: int) -> void:
		ends[label].append("made"))
	node.decision_fallback.connect(func(_tier: int, reason: String) -> void:
		ends[label].append(reason))
	return node


func _initialize() -> void:
	decision("warm", 0).request_decision({"threat": 0.1})
	for p in range(6):
		decision("p%d" % p, p)
	decision("late", -5).priority = 9


func _process(_delta: float) -> bool:
	frame += 1
	if not burst:
		if ends["warm"].is_empty() and frame < 4000:
			OS.delay_msec(5)
			return false
		check("warm answered", ends["warm"] == ["made"], ends["warm"])
		burst = true
		for label: String in nodes:
			if label != "warm":
				nodes[label].request_decision({"threat": 0.5})
		return false
	var waiting := false
	for label: String in ends:
		waiting = waiting or ends[label].is_empty()
	if waiting and frame < 4000:
		OS.delay_msec(5)
		return false
	var made := []
	var refused := []
	for label: String in nodes:
		if label == "warm":
			continue
		var how: String = ends[label][0] if ends[label].size() == 1 else "?"
		check(label + " ended once, answered or refused", how in ["made", "queue_full", "shed"], ends[label])
		(made if how == "made" else refused).append(nodes[label].priority)
	check("some answered, some refused", not made.is_empty() and not refused.is_empty(), [made, refused])
	check("the answered outrank the refused", made.min() > refused.max(), [made, refused])
	check("late was raised to 9", nodes["late"].priority == 9 and 9 in made, [made, refused])
	print(JSON.stringify({"done": true}))
	return true
