extends Node2D
## A person on the market square: a thief, a passer-by or the player. Walks along waypoints,
## can steal from a stall, hide behind a tree and throw things. Guards see the "people" group
## (their SightSense2D's rules), `stealing` makes a theft; a tree between hides a person.

enum Role { PASSERBY, THIEF, PLAYER }

@export var role: Role = Role.PASSERBY
@export var display_name := "someone"
@export var speed := 110.0

var concealed := false  ## behind a tree: no guard can see them
var stealing := false  ## caught in the act while true
var _target := Vector2.INF


func _init() -> void:
	add_to_group("people")


func walk_to(target: Vector2) -> void:
	_target = target
	concealed = false


func arrived() -> bool:
	return _target == Vector2.INF


func step(delta: float) -> void:
	if role == Role.PLAYER:
		var direction := Vector2(
			float(Input.is_physical_key_pressed(KEY_D)) - float(Input.is_physical_key_pressed(KEY_A)),
			float(Input.is_physical_key_pressed(KEY_S)) - float(Input.is_physical_key_pressed(KEY_W)))
		position += direction.normalized() * speed * delta
	elif _target != Vector2.INF:
		var to_target := _target - position
		var stride := speed * delta
		if to_target.length() <= stride:
			position = _target
			_target = Vector2.INF
		else:
			position += to_target / to_target.length() * stride
	queue_redraw()


func colour() -> Color:
	match role:
		Role.THIEF:
			return Color(0.86, 0.2, 0.2)
		Role.PLAYER:
			return Color(0.95, 0.8, 0.2)
	return Color(0.6, 0.6, 0.62)


func _draw() -> void:
	var fill := colour()
	if concealed:
		fill.a = 0.35
	draw_circle(Vector2.ZERO, 11.0, fill)
	draw_arc(Vector2.ZERO, 11.0, 0.0, TAU, 24, Color(0.1, 0.1, 0.1), 2.0)
	if stealing:
		draw_string(ThemeDB.fallback_font, Vector2(-22, -16), "stealing!", HORIZONTAL_ALIGNMENT_LEFT, -1, 13, Color.RED)
	draw_string(ThemeDB.fallback_font, Vector2(-24, 26), display_name, HORIZONTAL_ALIGNMENT_LEFT, -1, 12, Color(0.1, 0.1, 0.1))
