extends Node2D
## The scene a fresh game runs with the zipped addon (tests/test_ship_addon.py): a guard made of the
## three nodes; a memory forms and is forgotten on the server's manual clock, the selector chooses,
## and a decision whose endpoint does not answer falls back (httpx ran in the addon's runtime).

const STONE := 1 << 40

var formed: Array = []
var forgotten: Array = []
var fallbacks: Array = []
var frames := 0


func check(check_name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": check_name, "ok": ok, "detail": detail}))


func _ready() -> void:
	var server: Object = Engine.get_singleton("NpcMindServer")
	server.clock = "manual"
	var found := {"NpcMindServer": Engine.has_singleton("NpcMindServer")}
	for class_name_ in ["MemoryStream", "MemoryProfile", "UtilitySelector", "UtilityBehavior", "UtilityConsideration",
			"AsyncLLMDecision"]:
		found[class_name_] = ClassDB.class_exists(class_name_) and ClassDB.can_instantiate(class_name_)
	check("every class and the server exist", not found.values().has(false), found)
	$Memory.memory_formed.connect(func(entity: int, _type: int) -> void: formed.append(entity))
	$Memory.memory_forgotten.connect(func(entity: int, _type: int) -> void: forgotten.append(entity))
	$Decision.decision_fallback.connect(func(tier: int, reason: String) -> void: fallbacks.append([tier, reason]))
	$Memory.record_event(STONE, MemoryStream.TRIVIA, 0.0)
	server.advance(0.1)
	check("a memory forms", formed == [STONE] and $Memory.awareness_of(STONE) > 0, formed)
	# Trivia at salience 0: S = 2.5 s, forgotten at 2.5 ln(20) = 7.5 s.
	server.advance(10.0)
	check("and is forgotten", forgotten == [STONE] and $Memory.awareness_of(STONE) == 0, forgotten)
	check("the selector chooses", String($Selector.evaluate({"threat": 1.0})) == "search", $Selector.get_scores())
	$Decision.request_decision({"threat": 1.0, "situation": "a stone"})


func _process(_delta: float) -> void:
	frames += 1
	Engine.get_singleton("NpcMindServer").advance(0.05)
	if fallbacks.is_empty() and frames < 600:
		return
	check("the decision falls back when the endpoint does not answer", fallbacks.size() == 1, fallbacks)
	print(JSON.stringify({"done": true}))
	get_tree().quit(0)
