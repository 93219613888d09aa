extends SceneTree
## Engine objects in a decision's context, against the endpoint in NPC_MIND_TEST_ENDPOINT (the test's
## fault server, answering "attack"). A node passed as a value and freed in the same frame must not
## crash the engine (the prompt is made on the LLM thread, after the node is gone); a live node, nodes
## inside an Array and a Dictionary, and an object freed before the call all reach the prompt as plain
## data. A decision whose sibling MemoryStream was freed still asks (it raised inside the server's
## step, losing every node's update). A request pending when a setting changes ends at once as
## `reconfigured` (it ended in no signal). Prints one JSON line per check and the ids the test looks for
## in the prompts.

var ends := {}
var frame := 0


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func decision(label: String, parent: Node = root) -> Node:
	var node: Node = ClassDB.instantiate("AsyncLLMDecision")
	node.name = label
	node.allowed_intents = PackedStringArray(["attack", "flee"])
	node.endpoint = OS.get_environment("NPC_MIND_TEST_ENDPOINT")
	node.soft_deadline_ms = 10000
	node.hard_deadline_ms = 20000
	node.system_prompt = label  # tells the test which prompt is whose
	parent.add_child(node)
	ends[label] = []
	node.decision_made.connect(func(intent: StringName, _urgency: float, tier: int) -> void:
		ends[label].append(["made", String(intent), tier]))
	node.decision_fallback.connect(func(tier: int, reason: String) -> void:
		ends[label].append(["fallback", reason, tier]))
	return node


func _initialize() -> void:
	var enemy := Node2D.new()
	enemy.name = "Enemy"
	root.add_child(enemy)
	var gone := Node.new()
	gone.free()
	var watcher := Node3D.new()
	watcher.name = "Watcher"
	root.add_child(watcher)
	print(JSON.stringify({"ids": {"enemy": enemy.get_instance_id(), "watcher": watcher.get_instance_id()}}))
	decision("freed_same_frame").request_decision({"target": enemy, "threat": 0.9})
	enemy.queue_free()  # gone at the end of this frame, while the request is on the LLM thread
	decision("live_node").request_decision({"target": watcher, "list": [watcher, 1, "x"], "nested": {"who": watcher},
		"at": Vector2(3.5, -1.0), "tint": Color(1, 0, 0), "tags": PackedStringArray(["a", "b"]), "call": Callable(self, "check"),
		"res": Resource.new()})  # a RefCounted only the context holds: released here, on the main thread
	decision("freed_before").request_decision({"target": gone, "threat": 0.2})
	var later := decision("freed_right_after")
	later.request_decision({"target": watcher})
	watcher.free()  # freed at once, before the server's step of this frame

	var guard := Node.new()
	root.add_child(guard)
	var memory: Node = ClassDB.instantiate("MemoryStream")
	guard.add_child(memory)
	memory.record_event(7, MemoryStream.HOSTILE, 0.9)
	var forgetful := decision("memory_freed", guard)
	forgetful.get_server_id()  # registered with its sibling stream
	memory.free()
	forgetful.request_decision({"threat": 0.5})

	var changed := decision("reconfigured")
	changed.request_decision({"threat": 0.5})
	changed.tag_ttl = 5.0  # a setting changed while the request is pending: it ends at once
	check("reconfigured at once", ends["reconfigured"] == [["fallback", "reconfigured", 3]], ends["reconfigured"])
	changed.request_decision({"threat": 0.6})  # and the next one uses the new settings


func _process(_delta: float) -> bool:
	frame += 1
	var waiting: bool = ends["reconfigured"].size() < 2
	for label: String in ends:
		waiting = waiting or ends[label].is_empty()
	if waiting and frame < 4000:
		OS.delay_msec(5)
		return false
	for label: String in ends:
		var got: Array = ends[label].slice(1) if label == "reconfigured" else ends[label]
		check(label, got.size() == 1 and got[0][0] == "made" and got[0][1] == "attack", ends[label])
	print(JSON.stringify({"done": true}))
	return true
