extends Node2D
## A market guard: the designer's wiring of the three npc_mind nodes.
## - $Memory (MemoryStream): records what the guard sees every frame (everyone in sight as an
##   observation, a theft as hostile); the refractory period keeps that honest. A person is recalled
##   (a waking query) only on the frame the guard spots them; only hostile or traumatic memories
##   make a suspect.
## - $Selector (UtilitySelector): picks the behavior from the situation, every frame.
## - $Decision (AsyncLLMDecision): asked when something happens; its intent steers the selector,
##   and when the model is slow or absent the selector covers (tiers 2 and 3).
## Above the guard: its memories as bars that fade with R, its awareness, behavior and LLM tier.

signal reacted(what: String)

const AWARENESS_NAMES := ["none", "puzzled", "search", "pursue"]
const TYPE_NAMES := ["trivia", "observation", "interaction", "hostile", "trauma"]
const TYPE_COLOURS := [Color(0.6, 0.6, 0.6), Color(0.35, 0.6, 0.9), Color(0.4, 0.8, 0.4), Color(0.9, 0.3, 0.2), Color(0.6, 0.2, 0.8)]
const SIGHT := 260.0
const HEARING := 140.0
const GREETING := 130.0  # close enough to greet
const INTENT_TTL := 6.0  # seconds an LLM intent steers the selector

@export var display_name := "guard"
@export var patrol_route: PackedVector2Array = PackedVector2Array()
@export var speed := 80.0

var market: Node  ## set by the market
var behavior: StringName = &"patrol"
var awareness := 0
var tier := 0  ## tier of the last LLM decision, 0 before any
var pending := false  ## asked the LLM, no answer yet
var in_flight := false  ## the request has left (thinking_started)
var intent: StringName = &""
var intent_until := -1.0
var danger_until := -1.0
var danger_from := Vector2.ZERO
var suspects := {}  ## entity id -> last seen position
var _in_view := {}  ## entity id -> true while visible (to recall only when spotted)
var _patrol_index := 0

@onready var memory: Node = $Memory
@onready var selector: Node = $Selector
@onready var decision: Node = $Decision


func _ready() -> void:
	z_index = 2  # the guard's bars and labels stay above the people
	decision.thinking_started.connect(func() -> void: in_flight = pending)
	decision.decision_made.connect(_on_decision_made)
	decision.decision_fallback.connect(_on_decision_fallback)


func now() -> float:
	return NpcMindServer.now()


func perceive() -> void:
	## Called by the market once a frame, before `act`.
	for person: Node2D in market.people:
		var id: int = person.get_instance_id()
		var seen: bool = market.can_see(self, person, SIGHT)
		if seen and not _in_view.has(id):
			_spotted(person)  # recall first: what the guard remembers of them, before this sighting
		if seen:  # every frame: within the refractory period this only keeps the memory fresh
			memory.record_event(id, MemoryStream.OBSERVATION, 0.3)
		if seen and person.stealing:
			memory.record_event(id, MemoryStream.HOSTILE, 0.9)  # every frame of the theft
			suspects[id] = person.position
		if seen:
			_in_view[id] = true
			if suspects.has(id):
				suspects[id] = person.position
		else:
			_in_view.erase(id)


func _spotted(person: Node2D) -> void:
	var id: int = person.get_instance_id()
	var recalled: Dictionary = memory.query_strongest(id)  # a recall: wakes the memory
	if recalled.is_empty():
		return
	market.log_event({"event": "recall", "guard": display_name, "entity": person.display_name,
		"type": TYPE_NAMES[recalled.memory_type], "R": snappedf(recalled.retrievability, 0.001)})
	if recalled.memory_type >= MemoryStream.HOSTILE:
		suspects[id] = person.position
		ask("spotted %s, remembered as %s" % [person.display_name, TYPE_NAMES[recalled.memory_type]])


func hear_stone(thrower: Node2D) -> void:
	memory.record_event(thrower.get_instance_id(), MemoryStream.TRIVIA, 0.1)
	danger_from = thrower.position  # if the model says flee, away from the thrower
	ask("a stone landed at my feet")


func hear_grenade(thrower: Node2D, at: Vector2) -> void:
	var was_pending := pending
	var was_in_flight := in_flight
	if pending:
		decision.abort()  # the late answer must never steer the guard now
		pending = false
		in_flight = false
	memory.record_event(thrower.get_instance_id(), MemoryStream.TRAUMA, 1.0)
	suspects[thrower.get_instance_id()] = thrower.position
	danger_until = now() + 3.0
	danger_from = at
	intent = &""
	act(0.0)  # react in this very frame
	market.log_event({"event": "grenade", "guard": display_name, "pending": was_pending,
		"in_flight": was_in_flight, "behavior": String(behavior)})
	reacted.emit(String(behavior))


func ask(situation: String) -> void:
	## The model advises; the selector (with its vetoes) still decides, so a stray "greet" for a
	## thief can never win, whatever tier the answer arrives in.
	if pending:
		return
	var board := context()
	board["situation"] = situation
	board["behavior"] = String(behavior)
	decision.request_decision(board)
	pending = true
	market.log_event({"event": "ask", "guard": display_name, "situation": situation})


func _on_decision_made(chosen: StringName, _urgency: float, decided_tier: int) -> void:
	pending = false
	in_flight = false
	tier = decided_tier
	intent = chosen
	intent_until = now() + INTENT_TTL
	market.log_event({"event": "decision", "guard": display_name, "intent": String(chosen), "tier": decided_tier})


func _on_decision_fallback(decided_tier: int, reason: String) -> void:
	pending = false
	in_flight = false
	tier = decided_tier
	intent = &""
	market.log_event({"event": "fallback", "guard": display_name, "tier": decided_tier, "reason": reason})


func context() -> Dictionary:
	## The selector's inputs; awareness only looks, it never wakes a memory.
	awareness = 0
	var suspect_visible := 0.0
	for id: int in suspects.keys():
		var level: int = memory.awareness_of(id)
		if level == 0:
			suspects.erase(id)  # forgotten
			continue
		awareness = maxi(awareness, level)
		if _in_view.has(id):
			suspect_visible = 1.0
	var friend_visible := 0.0
	for someone: Node2D in market.people:
		var id := someone.get_instance_id()
		if _in_view.has(id) and not suspects.has(id) and position.distance_to(someone.position) < GREETING:
			friend_visible = 1.0
	return {
		"threat": awareness / 3.0,
		"suspect_visible": suspect_visible,
		"friend_visible": friend_visible,
		"danger": 1.0 if now() < danger_until else 0.0,
		# The model's advice, while fresh (tier 1 or 2): it tips the selector, whose vetoes still hold
		# (no greeting a thief, whatever it says; a grenade's danger outweighs any advice).
		"intent_pursue": 1.0 if _intent_is(&"pursue") else 0.0,
		"intent_search": 1.0 if _intent_is(&"search") else 0.0,
		"intent_puzzled": 1.0 if _intent_is(&"puzzled") else 0.0,
		"intent_flee": 1.0 if _intent_is(&"flee") else 0.0,
	}


func _intent_is(name: StringName) -> bool:
	return intent == name and now() < intent_until


func act(delta: float) -> void:
	var chosen: StringName = selector.evaluate(context())
	behavior = chosen
	_move(delta)
	queue_redraw()


func _move(delta: float) -> void:
	var target := position
	match behavior:
		&"patrol":
			if not patrol_route.is_empty():
				target = patrol_route[_patrol_index]
				if position.distance_to(target) < 4.0:
					_patrol_index = (_patrol_index + 1) % patrol_route.size()
		&"pursue", &"search":
			target = _nearest_suspect_position()
		&"flee":
			target = position + (position - danger_from).normalized() * 100.0
	var pace := speed * (1.6 if behavior in [&"pursue", &"flee"] else 1.0)
	position = position.move_toward(target, pace * delta)


func _nearest_suspect_position() -> Vector2:
	var best := position
	var best_distance := INF
	for id: int in suspects:
		var at: Vector2 = suspects[id]
		if position.distance_to(at) < best_distance:
			best_distance = position.distance_to(at)
			best = at
	return best


func _draw() -> void:
	draw_circle(Vector2.ZERO, 14.0, Color(0.2, 0.35, 0.85))
	draw_arc(Vector2.ZERO, 14.0, 0.0, TAU, 24, Color(0.05, 0.05, 0.2), 2.0)
	var font := ThemeDB.fallback_font
	var tier_text := "thinking..." if in_flight else ("tier %d" % tier if tier > 0 else "-")
	if not in_flight and tier in [1, 2] and now() < intent_until:
		tier_text += ": " + String(intent)  # what the model said, while it still steers
	draw_string(font, Vector2(-40, 30), "%s: %s" % [display_name, behavior], HORIZONTAL_ALIGNMENT_LEFT, -1, 13, Color.BLACK)
	draw_string(font, Vector2(-40, 44), "%s | LLM %s" % [AWARENESS_NAMES[awareness], tier_text], HORIZONTAL_ALIGNMENT_LEFT, -1, 12, Color(0.15, 0.15, 0.15))
	# Memories: one bar each, its length R; they visibly fade.
	var y := -26.0
	for entry: Dictionary in memory.get_memories().slice(0, 5):
		var colour: Color = TYPE_COLOURS[entry.memory_type]
		draw_rect(Rect2(-40, y, 80, 7), Color(0, 0, 0, 0.25))
		draw_rect(Rect2(-40, y, 80.0 * entry.retrievability, 7), colour)
		draw_string(font, Vector2(44, y + 7), "%s %s R=%.2f" % [market.name_of(entry.entity_id), TYPE_NAMES[entry.memory_type], entry.retrievability], HORIZONTAL_ALIGNMENT_LEFT, -1, 11, Color.BLACK)
		y -= 10.0
