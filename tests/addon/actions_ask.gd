extends SceneTree
## An AskDecisionAction, against the endpoint in NPC_MIND_TEST_ENDPOINT (the test's fault server,
## answering "attack"): when the guard's "alert" behavior begins, it asks its AsyncLLMDecision once
## with the situation written from the designer's template (the target's name, seconds since seen,
## distance to its last known position, the running behavior, a sourced input) and the other fields
## as facts; the
## answer arrives as decision_made. A template naming an unknown field is one error and no request.
## Manual clock. One JSON line per check; the test reads the prompt the server got.

const B = preload("res://tests/addon/utility_builders.gd")

var answers := []
var frame := 0
var selector: Node


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func ask(template: String) -> Resource:
	var made: Resource = ClassDB.instantiate("AskDecisionAction")
	made.template = template
	return made


func _initialize() -> void:
	NpcMindServer.clock = "manual"
	var guard := Node2D.new()
	guard.name = "Guard"
	root.add_child(guard)
	var memory: Node = ClassDB.instantiate("MemoryStream")
	guard.add_child(memory)
	var decision: Node = ClassDB.instantiate("AsyncLLMDecision")
	decision.allowed_intents = PackedStringArray(["attack", "idle"])
	decision.endpoint = OS.get_environment("NPC_MIND_TEST_ENDPOINT")
	decision.soft_deadline_ms = 10000
	decision.hard_deadline_ms = 20000
	decision.system_prompt = "ask_guard"
	guard.add_child(decision)
	decision.decision_made.connect(func(intent: StringName, _u: float, tier: int) -> void: answers.append([String(intent), tier]))
	decision.decision_fallback.connect(func(tier: int, reason: String) -> void: answers.append([reason, tier]))
	var alarm: Resource = B.consideration("alarm")
	var board: Resource = ClassDB.instantiate("BlackboardInput")
	board.key = &"alarm_level"
	alarm.source = board
	var alert: Resource = B.behavior("alert", [alarm])
	alert.on_enter = B.actions([ask("{target_name} was last seen {since_seen:.0f} s ago, {distance:.0f} m away; I am {behavior} ({alarm:.2f})"),
		ask("{nobody} is here")])
	selector = B.selector([alert])
	selector.target_from = "memory"
	selector.auto_evaluate = "never"  # chosen through evaluate() below
	selector.set_blackboard_value(&"alarm_level", 0.75)
	guard.add_child(selector)
	await process_frame  # in the tree: the selector and the stream join the server
	var thief := Node2D.new()
	thief.name = "Thief"
	root.add_child(thief)
	memory.record_event(thief.get_instance_id(), MemoryStream.HOSTILE, 0.9)
	memory.note_sighting(thief.get_instance_id(), Vector2(30, 40))
	NpcMindServer.advance(12.0)  # the target is picked from memory
	check("the target is the thief", selector.get_target_node() == thief, [selector.get_target_id(), thief.get_instance_id()])
	selector.evaluate({"alarm": 1.0})
	NpcMindServer.advance(0.0)  # the change is delivered: alert's on_enter asks


func _process(_delta: float) -> bool:
	frame += 1
	if selector == null or not selector.is_inside_tree():
		return false
	if answers.is_empty() and frame < 4000:
		OS.delay_msec(5)
		return false
	check("one request, answered", answers == [["attack", 1]], answers)
	var failed: Array = selector.get_recent_actions().filter(func(e: Dictionary) -> bool: return not e.ok)
	check("the bad template was skipped", failed.size() == 1 and failed[0].index == 1, selector.get_recent_actions())
	print(JSON.stringify({"done": true}))
	return true
