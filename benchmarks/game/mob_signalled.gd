extends "res://benchmarks/game/mob_base.gd"
## A mob of the game benchmark on the npc_mind nodes with no per-frame selector call: each physics
## frame it records the player while it sees it and moves; its UtilitySelector chooses by itself
## from sourced inputs (AwarenessInput of its target from memory, BlackboardInput) and tells the mob
## its new behavior through behavior_changed.

var player_id := 0
@onready var memory: MemoryStream = $Memory


func _ready() -> void:
	player_id = player.get_instance_id()
	$Selector.behavior_changed.connect(_on_behavior_changed)


func _on_behavior_changed(chosen: StringName) -> void:
	behavior = chosen


func _physics_process(_delta: float) -> void:
	if sees():
		memory.record_event(player_id, MemoryStream.OBSERVATION, 0.5)
		last_seen_position = player.global_position
	move_by_behavior()
