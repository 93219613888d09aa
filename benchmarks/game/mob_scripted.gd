extends "res://benchmarks/game/mob_base.gd"
## A mob of the game benchmark scripted on the npc_mind nodes: each physics frame it records the
## player while it sees it, reads its awareness and asks its UtilitySelector (the per-node path).

var player_id := 0
var context := {"awareness": 0, "calm": 0.2}
@onready var memory: MemoryStream = $Memory
@onready var selector: UtilitySelector = $Selector


func _ready() -> void:
	player_id = player.get_instance_id()


func _physics_process(_delta: float) -> void:
	if sees():
		memory.record_event(player_id, MemoryStream.OBSERVATION, 0.5)
		last_seen_position = player.global_position
	context["awareness"] = memory.awareness_of(player_id)
	behavior = selector.evaluate(context)
	move_by_behavior()
