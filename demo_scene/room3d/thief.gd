extends CharacterBody3D
## The thief of the 3D room (the game's side, not the mind): it waits by the pedestal, steals at
## `steal_at` seconds (`stealing` turns true, which the guard's sight rules read; its Clatter
## stimulus sounds once), runs out through the door along `escape` and hides behind the east wall.
## `stole` and `hid` are for the scene (the loot disappears) and the story check.

signal stole
signal hid

@export var speed := 4.5
@export var steal_at := 3.0
@export var escape: Array[Vector3] = []

var stealing := false
var _time := 0.0
var _next := -1  ## the escape waypoint it walks to (-1: not yet running)


func _physics_process(delta: float) -> void:
	_time += delta
	if _next == -1 and _time >= steal_at:
		stealing = true
		$Clatter.emit()
		stole.emit()
		_next = 0
	if _next < 0 or _next >= escape.size():
		return
	var to_goal := escape[_next] - global_position
	var stride := speed * delta
	if to_goal.length() <= stride:
		global_position = escape[_next]
		_next += 1
		if _next == escape.size():
			hid.emit()
	else:
		global_position += to_goal / to_goal.length() * stride
		rotation.y = atan2(-to_goal.x, -to_goal.z)
