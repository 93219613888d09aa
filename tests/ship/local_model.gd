extends Node
## A guard whose decision the local model answers: the game started the model itself (the project
## setting npc_mind/llm/start_local_model, or NPC_MIND_START_LOCAL_MODEL=1). The node asks once,
## prints one JSON line per check and quits. Main scene of the shipped-model game
## (tests/test_ship_local_model.py); tests/addon/local_model.gd runs it from a SceneTree script.

const LIMIT_S := 60.0

var decision: Node
var ended: Array = []
var started_at := 0.0


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func _ready() -> void:
	var guard := Node2D.new()
	decision = ClassDB.instantiate("AsyncLLMDecision")
	decision.allowed_intents = PackedStringArray(["pursue", "search", "patrol"])
	decision.system_prompt = "a guard at a city gate"
	decision.hard_deadline_ms = 50000  # a busy machine: the answer must arrive to be applied
	decision.soft_deadline_ms = 300
	guard.add_child(decision)
	add_child(guard)
	decision.decision_made.connect(func(intent: StringName, _urgency: float, tier: int) -> void:
		ended.append({"intent": String(intent), "tier": tier, "ms": _waited_ms()}))
	decision.decision_fallback.connect(func(tier: int, reason: String) -> void:
		ended.append({"fallback": reason, "tier": tier, "ms": _waited_ms()}))
	started_at = Time.get_ticks_msec() / 1000.0
	decision.request_decision({"situation": "a thief runs through the gate", "threat": 0.9})


func _waited_ms() -> int:
	return int((Time.get_ticks_msec() / 1000.0 - started_at) * 1000.0)


func _process(_delta: float) -> void:
	if ended.is_empty() and _waited_ms() < LIMIT_S * 1000.0:
		return
	set_process(false)
	check("one decision signal", ended.size() == 1, ended)
	var made: bool = ended.size() == 1 and ended[0].has("intent")
	check("the model's answer was applied", made and ended[0]["intent"] in ["pursue", "search", "patrol"]
		and ended[0]["tier"] in [1, 2], ended)
	print(JSON.stringify({"done": true}))
	get_tree().quit(0)
