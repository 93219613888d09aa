extends CharacterBody2D
## A market guard, wired in the inspector: no code decides what it notices, wants or does.
## - Sight (SightSense2D): people in view are observations, a theft is hostile; someone coming into
##   view is recalled first (recall_on_spot). Greeting (a short SightSense2D): people close by, also
##   recalled when they come into its view.
##   Hearing (HearingSense2D): the stones and grenades the market emits as stimuli.
## - Selector (UtilitySelector): its target is the strongest hostile or traumatic memory; every input
##   is sourced (awareness of the target, fresh noises, danger, the LLM's advice), so it chooses by
##   itself, and each behavior's actions move the guard, set its mark, animate it and ask the LLM.
## This script only draws: its memories as bars that fade with R, its awareness, behavior and LLM
## tier, read from the nodes' signals and read-only views.

const AWARENESS_NAMES := ["none", "puzzled", "search", "pursue"]
const TYPE_NAMES := ["trivia", "observation", "interaction", "hostile", "trauma"]
const TYPE_COLOURS := [Color(0.6, 0.6, 0.6), Color(0.35, 0.6, 0.9), Color(0.4, 0.8, 0.4), Color(0.9, 0.3, 0.2), Color(0.6, 0.2, 0.8)]

@export var display_name := "guard"

var behavior: StringName = &""
var tier := 0  ## tier of the last LLM decision, 0 before any
var asked := false  ## asked the LLM (decision_requested), no answer yet
var in_flight := false  ## the request has left (thinking_started), no answer yet
var intent: StringName = &""

@onready var memory: Node = $Memory
@onready var selector: Node = $Selector
@onready var decision: Node = $Decision
@onready var sights: Array[Node] = [$Sight, $Greeting]


func _ready() -> void:
	z_index = 2  # the guard's bars and labels stay above the people
	selector.behavior_changed.connect(func(chosen: StringName) -> void: behavior = chosen)
	decision.decision_requested.connect(func(_situation: String) -> void: asked = true)
	decision.thinking_started.connect(func() -> void: in_flight = true)
	decision.decision_made.connect(func(chosen: StringName, _urgency: float, decided: int) -> void: _answered(decided, chosen))
	decision.decision_fallback.connect(func(decided: int, _reason: String) -> void: _answered(decided, &""))
	decision.decision_aborted.connect(func() -> void: _answered(tier, &""))


func _answered(decided: int, chosen: StringName) -> void:
	asked = false
	in_flight = false
	tier = decided
	intent = chosen


func pending() -> bool:
	return asked


func awareness() -> int:
	## Of its target, 0 none .. 3 pursue: the selector's "threat" input (an AwarenessInput).
	return clampi(int(selector.get_sourced_inputs().get("threat", 0.0)), 0, 3)


func _process(_delta: float) -> void:
	queue_redraw()


func _draw() -> void:
	draw_circle(Vector2.ZERO, 14.0, Color(0.2, 0.35, 0.85))
	draw_arc(Vector2.ZERO, 14.0, 0.0, TAU, 24, Color(0.05, 0.05, 0.2), 2.0)
	var font := ThemeDB.fallback_font
	var tier_text := "thinking..." if in_flight else ("tier %d" % tier if tier > 0 else "-")
	if not in_flight and intent != &"":
		tier_text += ": " + String(intent)  # what the model said
	draw_string(font, Vector2(-40, 30), "%s: %s" % [display_name, behavior], HORIZONTAL_ALIGNMENT_LEFT, -1, 13, Color.BLACK)
	draw_string(font, Vector2(-40, 44), "%s | LLM %s" % [AWARENESS_NAMES[awareness()], tier_text], HORIZONTAL_ALIGNMENT_LEFT, -1, 12, Color(0.15, 0.15, 0.15))
	# Memories: one bar each, its length R; they visibly fade.
	var y := -26.0
	for entry: Dictionary in memory.get_memories().slice(0, 5):
		var colour: Color = TYPE_COLOURS[entry.memory_type]
		draw_rect(Rect2(-40, y, 80, 7), Color(0, 0, 0, 0.25))
		draw_rect(Rect2(-40, y, 80.0 * entry.retrievability, 7), colour)
		draw_string(font, Vector2(44, y + 7), "%s %s R=%.2f" % [_name_of(entry.entity_id), TYPE_NAMES[entry.memory_type], entry.retrievability], HORIZONTAL_ALIGNMENT_LEFT, -1, 11, Color.BLACK)
		y -= 10.0


func _name_of(entity_id: int) -> String:
	var node := instance_from_id(entity_id)
	return String(node.get("display_name")) if node != null else str(entity_id)
