extends CharacterBody2D
## A mob of the game benchmark in plain GDScript: a hand-made memory (seconds since seen, last seen
## position), the same chase/search/wander choice and moves as the npc_mind variants.

const SIGHT := 300.0
const CHASE_FOR := 1.0  # seconds since seen: chase, then search
const SEARCH_FOR := 8.0
const SPEEDS := {&"chase": 150.0, &"search": 90.0, &"wander": 60.0}

var player: Node2D
var spot := Vector2.ZERO
var behavior := &"wander"
var last_seen_at := -INF
var last_seen_position := Vector2.ZERO


func setup(seen: Node2D, own_spot: Vector2) -> void:
	player = seen
	spot = own_spot


func sees() -> bool:
	if global_position.distance_squared_to(player.global_position) > SIGHT * SIGHT:
		return false
	var ray := PhysicsRayQueryParameters2D.create(global_position, player.global_position, 1, [get_rid()])
	return get_world_2d().direct_space_state.intersect_ray(ray).is_empty()


func _physics_process(_delta: float) -> void:
	var now := Time.get_ticks_msec() / 1000.0
	if sees():
		last_seen_at = now
		last_seen_position = player.global_position
	var since := now - last_seen_at
	behavior = &"chase" if since < CHASE_FOR else (&"search" if since < SEARCH_FOR else &"wander")
	var goal := spot if behavior == &"wander" else last_seen_position
	var to_goal := goal - global_position
	velocity = Vector2.ZERO if to_goal.length() <= 4.0 else to_goal.normalized() * SPEEDS[behavior]
	move_and_slide()
