extends CharacterBody2D
## A mob of the game benchmark scripted on the npc_mind nodes: each physics frame it records the
## player while it sees it, reads its awareness and asks its UtilitySelector (the per-node path).

const SIGHT := 300.0
const SPEEDS := {&"chase": 150.0, &"search": 90.0, &"wander": 60.0}

var player: Node2D
var player_id := 0
var spot := Vector2.ZERO
var behavior := &"wander"
var last_seen_position := Vector2.ZERO
var context := {"awareness": 0, "calm": 0.2}
@onready var memory: Node = $Memory
@onready var selector: Node = $Selector


func setup(seen: Node2D, own_spot: Vector2) -> void:
	player = seen
	player_id = seen.get_instance_id()
	spot = own_spot


func sees() -> bool:
	if global_position.distance_squared_to(player.global_position) > SIGHT * SIGHT:
		return false
	var ray := PhysicsRayQueryParameters2D.create(global_position, player.global_position, 1, [get_rid()])
	return get_world_2d().direct_space_state.intersect_ray(ray).is_empty()


func _physics_process(_delta: float) -> void:
	if sees():
		memory.record_event(player_id, MemoryStream.OBSERVATION, 0.5)
		last_seen_position = player.global_position
	context["awareness"] = memory.awareness_of(player_id)
	behavior = selector.evaluate(context)
	var goal := spot if behavior == &"wander" else last_seen_position
	var to_goal := goal - global_position
	velocity = Vector2.ZERO if to_goal.length() <= 4.0 else to_goal.normalized() * SPEEDS[behavior]
	move_and_slide()
