extends "res://benchmarks/game/mob_base.gd"
## A mob of the game benchmark scripted on the npc_mind nodes' batched path: each physics frame it
## records the player while it sees it, sets its selector's awareness input (set_input) and reads
## the choice the server made for it from the inputs of the frame before (get_choice).

var player_id := 0
@onready var memory: MemoryStream = $Memory
@onready var selector: UtilitySelector = $Selector


func _ready() -> void:
	player_id = player.get_instance_id()
	selector.set_input(&"calm", 0.2)


func _physics_process(_delta: float) -> void:
	if sees():
		memory.record_event(player_id, MemoryStream.OBSERVATION, 0.5)
		last_seen_position = player.global_position
	selector.set_input(&"awareness", memory.awareness_of(player_id))
	var chosen := selector.get_choice()
	if chosen:
		behavior = chosen
	move_by_behavior()
