extends SceneTree
## IntentInput against the endpoint in NPC_MIND_TEST_ENDPOINT (the test's fault server, answering
## "flee"): a selector whose inputs are all sourced chooses by itself; its "flee" behavior's input is
## 1 from the frame after the decision's answer until the answer is tag_ttl old, then 0 again (the
## NPC goes back to idle), and an aborted answer stops steering at once. One JSON line per check.

const B = preload("res://tests/addon/utility_builders.gd")

var frame := 0
var selector: Node
var decision: Node
var changes := []  # [behavior, seconds]
var answered_at := -1.0


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func sourced(key: String, source: Resource) -> Resource:
	var made: Resource = B.consideration(key)
	made.source = source
	return made


func _initialize() -> void:
	var npc := Node2D.new()
	npc.name = "Guard"
	root.add_child(npc)
	npc.add_child(ClassDB.instantiate("MemoryStream"))
	decision = ClassDB.instantiate("AsyncLLMDecision")
	decision.allowed_intents = PackedStringArray(["flee", "idle"])
	decision.endpoint = OS.get_environment("NPC_MIND_TEST_ENDPOINT")
	decision.soft_deadline_ms = 10000
	decision.hard_deadline_ms = 20000
	decision.tag_ttl = 1.0
	npc.add_child(decision)
	decision.decision_made.connect(func(_i: StringName, _u: float, _t: int) -> void: answered_at = NpcMindServer.now())
	var advice: Resource = ClassDB.instantiate("IntentInput")
	advice.intent = &"flee"
	var calm: Resource = ClassDB.instantiate("BlackboardInput")
	calm.key = &"calm"
	calm.when_unknown = 0.5
	var flee: Resource = B.behavior("flee", [sourced("", advice)])
	var idle: Resource = B.behavior("idle", [sourced("", calm)])
	selector = B.selector([flee, idle])
	npc.add_child(selector)
	selector.behavior_changed.connect(func(name: StringName) -> void: changes.append([String(name), NpcMindServer.now()]))
	check("no warnings when wired", NpcMindDesigner.get_configuration_warnings(selector).is_empty(),
		NpcMindDesigner.get_configuration_warnings(selector))
	var lonely: Node = B.selector([B.behavior("flee", [sourced("", advice.duplicate())])])
	root.add_child(lonely)
	var warnings: PackedStringArray = NpcMindDesigner.get_configuration_warnings(lonely)
	check("no decision to read: a warning", warnings.size() == 1 and "no AsyncLLMDecision" in warnings[0], warnings)
	root.remove_child(lonely)
	lonely.free()


func _process(_delta: float) -> bool:
	frame += 1
	if frame == 5:
		decision.request_decision({"situation": "a grenade?"})
	if answered_at >= 0.0 and NpcMindServer.now() > answered_at + 1.5 and not changes.is_empty() and changes[-1][0] == "idle" and changes.size() == 3:
		var inputs: Dictionary = selector.get_sourced_inputs()
		check("idle first, flee once answered, idle when the answer is tag_ttl old",
			changes.map(func(c: Array) -> String: return c[0]) == ["idle", "flee", "idle"]
			and changes[1][1] >= answered_at and changes[1][1] - answered_at < 0.1
			and absf(changes[2][1] - answered_at - 1.0) < 0.1, [changes, answered_at])
		check("the input reads 0 once stale", inputs.get("intent(flee)") == 0.0, inputs)
		decision.request_decision({"situation": "again"})
		answered_at = -2.0
		return false
	if answered_at >= 0.0 and changes.size() == 4 and changes[-1][0] == "flee" and frame < 100000:
		decision.abort()  # the fresh answer stops steering at once
		frame = 100000
	if frame == 100003:
		check("an aborted answer no longer steers", changes.size() == 5 and changes[-1][0] == "idle", changes)
		print(JSON.stringify({"done": true}))
		return true
	if NpcMindServer.now() > 30.0:
		check("finished in time", false, [changes, answered_at])
		return true
	return false
