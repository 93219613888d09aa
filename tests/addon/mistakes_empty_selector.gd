extends SceneTree
## A UtilitySelector placed with no behaviors (a designer's first step): every call and frame
## after is one mistake, said once naming the node and the fix, never a traceback a call; it
## chooses none meanwhile, and chooses as soon as it is given a behavior. One JSON line per check.

const Build := preload("res://tests/addon/utility_builders.gd")

var selector: Node
var frame := 0
var answers := {}


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func _initialize() -> void:
	var guard := Node2D.new()
	guard.name = "Guard"
	root.add_child(guard)
	selector = ClassDB.instantiate("UtilitySelector")
	selector.name = "Selector"
	guard.add_child(selector)


func _process(_delta: float) -> bool:
	frame += 1
	if frame <= 10:
		var untyped = selector
		answers[String(untyped.evaluate({"calm": 1.0}))] = true
		answers[String(untyped.get_choice())] = true
		untyped.set_input(&"calm", 0.5)
		return false
	check("it chose none meanwhile", answers.keys() == [""], answers)
	selector.behaviors = [Build.behavior("rest", [Build.consideration("calm")])]
	check("given a behavior, it chooses", selector.evaluate({"calm": 0.5}) == &"rest")
	var repeats: Variant = NpcMindServer.get_metrics()["mistakes/repeats"]
	check("the repeats are counted", repeats >= 20.0, repeats)
	print(JSON.stringify({"done": true}))
	return true
