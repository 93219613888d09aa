extends "res://benchmarks/game/mob_base.gd"
## A mob of the game benchmark in plain GDScript: a hand-made memory (seconds since seen, last seen
## position), the same chase/search/wander choice and moves as the npc_mind variants.
##
## The same logic, also in time and in outcome: its seconds are game seconds (the physics deltas
## summed, as the npc_mind server's clock counts them; wall time would make its memory depend on
## how fast the machine runs the frames), and its two windows are set so that its mobs hold the
## behaviors the scripted variant's mobs hold at the end of the run (within 2% at 200 and 1,000
## mobs: bench_game.py prints both): a mob that has seen the player remembers it as long as
## npc_mind's memory does here, so both variants chase, search and raycast as much.

const CHASE_FOR := 6.5  # game seconds since seen: chase, then search
const SEARCH_FOR := 15.0  # then wander

var now := 0.0
var last_seen_at := -INF


func _physics_process(delta: float) -> void:
	now += delta
	if sees():
		last_seen_at = now
		last_seen_position = player.global_position
	var since := now - last_seen_at
	behavior = &"chase" if since < CHASE_FOR else (&"search" if since < SEARCH_FOR else &"wander")
	move_by_behavior()
