extends SceneTree
## A consideration's default_input: a selector whose behavior reads a key the game does not give
## (as a behavior added in the inspector would) chooses with the default instead of stopping, on
## the Dictionary path (evaluate) and on the batched path (set_inputs + get_choices). One JSON line
## per check.


const Build := preload("res://tests/addon/utility_builders.gd")


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func selector_with_default(default_danger: float) -> Node:
	var danger := Build.consideration("danger")  # the game never gives it
	danger.use_default_input = true
	danger.default_input = default_danger
	var selector := Build.selector([
		Build.behavior("attack", [Build.consideration("threat")]), Build.behavior("flee", [danger])])
	root.add_child(selector)
	return selector


func _initialize() -> void:
	var calm := selector_with_default(0.2)
	var scared := selector_with_default(0.9)
	check("evaluate: the default stands in", calm.evaluate({"threat": 0.5}) == &"attack" and scared.evaluate({"threat": 0.5}) == &"flee", [calm.get_scores(), scared.get_scores()])
	check("evaluate: a given value wins", calm.evaluate({"threat": 0.5, "danger": 1.0}) == &"flee", calm.get_scores())
	var ids := PackedInt32Array([calm.get_server_id(), scared.get_server_id()])
	NpcMindServer.set_inputs(ids, &"threat", PackedFloat32Array([0.5, 0.5]))
	NpcMindServer.clock = "manual"
	NpcMindServer.advance(0.1)
	var names: PackedStringArray = calm.get_behavior_names()
	var choices: PackedInt32Array = NpcMindServer.get_choices(ids)
	check("batched: the default stands in", names[choices[0]] == "attack" and names[choices[1]] == "flee", [names, choices])
	print(JSON.stringify({"done": true}))
	quit()
