extends Node3D
## A teammate's first script in a 3D game (tests/test_mistakes_teammate.py), with two mistakes
## made as a new user makes them: the designer typed "hungr" for the consideration's input key
## while the script passes "hunger", and the script passes the player Node as the entity id. Each
## physics tick for FRAMES ticks, untyped, as such a script is written; then it prints what the
## mob chose and remembered.

const FRAMES := 120

var ticks := 0
var chosen := 0


func _physics_process(_delta: float) -> void:
	ticks += 1
	var brain = $Mob/Brain
	var memory = $Mob/Memory
	var behavior = brain.evaluate({"hunger": 0.8, "boredom": 0.3})
	if behavior in [&"eat", &"wander"]:
		chosen += 1
	memory.record_event($Player, MemoryStream.HOSTILE, 0.9)
	if ticks == FRAMES:
		print(JSON.stringify({"ticks": ticks, "chosen": chosen, "aware": memory.awareness_of($Player)}))
		get_tree().quit()
