extends SceneTree
## Drives tests/test_utility_one_meaning.py: builds a UtilityConsideration in a selector for each
## case given as JSON (`-- --cases=...`: family, params, range, invert, table points), scores every
## input through the server (UtilitySelector.evaluate + get_scores) and prints one JSON line per
## case with the definition the resource produced and the scores.

const Build := preload("res://tests/addon/utility_builders.gd")
const INPUTS := [-0.5, 0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0, 1.5, 6.0, 40.0]


func consideration_for(case: Dictionary) -> Resource:
	var consideration := Build.consideration("x", case.family)
	consideration.curve_params = case.params
	consideration.invert = case.invert
	if case.range != null:
		consideration.use_input_range = true
		consideration.input_min = case.range[0]
		consideration.input_max = case.range[1]
	if case.family == "table":
		var curve := Curve.new()
		for point: Array in case.points:
			curve.add_point(Vector2(point[0], point[1]), 0, 0, Curve.TANGENT_LINEAR, Curve.TANGENT_LINEAR)
		consideration.curve = curve
	return consideration


func _initialize() -> void:
	var cases: Array = []
	for argument in OS.get_cmdline_user_args():
		if argument.begins_with("--cases="):
			cases = JSON.parse_string(argument.trim_prefix("--cases="))
	for index in cases.size():
		var consideration := consideration_for(cases[index])
		var selector := Build.selector([Build.behavior("b", [consideration])])
		root.add_child(selector)
		var scores := []
		for value in INPUTS:
			selector.evaluate({"x": value})
			scores.append(selector.get_scores()["b"])
		print(JSON.stringify({"case": index, "definition": consideration.to_dict(), "inputs": INPUTS, "scores": scores}))
		selector.queue_free()
	print(JSON.stringify({"done": true}))
	quit()
