extends "res://benchmarks/game/mob_base.gd"
## A mob of the game benchmark in plain GDScript: a hand-made memory (seconds since seen, last seen
## position), the same chase/search/wander choice and moves as the npc_mind variants.

const CHASE_FOR := 1.0  # seconds since seen: chase, then search
const SEARCH_FOR := 8.0

var last_seen_at := -INF


func _physics_process(_delta: float) -> void:
	var now := Time.get_ticks_msec() / 1000.0
	if sees():
		last_seen_at = now
		last_seen_position = player.global_position
	var since := now - last_seen_at
	behavior = &"chase" if since < CHASE_FOR else (&"search" if since < SEARCH_FOR else &"wander")
	move_by_behavior()
