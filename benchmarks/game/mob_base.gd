extends CharacterBody2D
## What every mob of the game benchmark shares, whatever decides for it: its sight (within SIGHT
## and no wall on the ray) and its move toward a goal at its behavior's speed.

const SIGHT := 300.0
const SPEEDS := {&"chase": 150.0, &"search": 90.0, &"wander": 60.0}

var player: Node2D
var spot := Vector2.ZERO
var behavior := &"wander"
var last_seen_position := Vector2.ZERO


func setup(seen: Node2D, own_spot: Vector2) -> void:
	player = seen
	spot = own_spot


func sees() -> bool:
	if global_position.distance_squared_to(player.global_position) > SIGHT * SIGHT:
		return false
	var ray := PhysicsRayQueryParameters2D.create(global_position, player.global_position, 1, [get_rid()])
	return get_world_2d().direct_space_state.intersect_ray(ray).is_empty()


func move_by_behavior() -> void:
	var goal := spot if behavior == &"wander" else last_seen_position
	var to_goal := goal - global_position
	velocity = Vector2.ZERO if to_goal.length() <= 4.0 else to_goal.normalized() * SPEEDS[behavior]
	move_and_slide()
