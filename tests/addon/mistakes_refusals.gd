extends SceneTree
## Issue 22 (11): a UtilitySelector's behaviors (and a UtilityBehavior's considerations) that hold
## something other than the resource, or null, are refused with a TypeError naming the slot; the
## property keeps its value and the selector goes on choosing. An input given as no number is said
## once and reads as 0. One JSON line per check.

const Build := preload("res://tests/addon/utility_builders.gd")


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func _initialize() -> void:
	var selector := Build.selector([Build.behavior("idle", [Build.consideration("calm")])])
	root.add_child(selector)
	check("it chooses", selector.evaluate({"calm": 0.5}) == &"idle")
	selector.behaviors = [null, 5, "x"]
	check("the bad behaviors are refused and the old ones kept",
		selector.behaviors.size() == 1 and selector.behaviors[0].name == &"idle", selector.behaviors)
	check("it still chooses", selector.evaluate({"calm": 0.5}) == &"idle")
	var behavior: Resource = selector.behaviors[0]
	var stray := Node.new()
	behavior.considerations = [Build.consideration("calm"), stray]
	check("a consideration slot holding a Node is refused", behavior.considerations.size() == 1, behavior.considerations)
	stray.free()
	selector.behaviors = [null, Build.behavior("rest", [Build.consideration("calm")])]
	check("null slots are still allowed (skipped)", selector.evaluate({"calm": 0.5}) == &"rest")
	var chose := 0
	for i in 10:  # a String where a number goes, every frame: said once, read as 0
		if selector.evaluate({"calm": "high"}) == &"rest":
			chose += 1
	check("a value that is no number reads as 0", chose == 10, chose)
	var untyped = selector
	for i in 10:  # the batched path: said once per call kind, the value ignored
		untyped.set_input(&"calm", "high")
		untyped.set_inputs({"calm": "high"})
	untyped.set_inputs({"calm": 0.7, "other": "x"})
	var kept: Variant = NpcMindServer.get_metrics()["mistakes/repeats"]
	check("the batched path goes on", kept >= 18.0, kept)
	print(JSON.stringify({"done": true}))
	quit()
