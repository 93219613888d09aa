extends Node


func _process(_delta: float) -> void:
	pass
