extends SceneTree
## UtilitySelector.evaluate as games call it every frame, for tests/test_addon_selector_answers.py:
## definitions given as JSON (--spec=...), several selectors each, contexts from a fixed sequence
## that repeats a context for frames (what the binding answers in C) and changes it, with unknown
## keys, NaN, a missing key, a String where a number goes, ints for floats, StringName keys, three
## calls a frame (one context, another, the first again); a selector added later (its first call), one freed, one whose behaviors change.
## One JSON line: every call (frame, now, selector, context, answer), the behavior_changed signals,
## some get_scores() and the binding's counts of calls answered in C (and of those by the kernel's check).

const Build := preload("res://tests/addon/utility_builders.gd")
const FRAMES := 90

var spec: Dictionary
var selectors: Array[Node] = []
var calls: Array = []
var changes: Array = []
var scores: Array = []
var frame := 0
var answered_at_start := 0.0
var checked_at_start := 0.0


func _make(definition: Dictionary, index: int) -> Node:
	var behaviors: Array = []
	for b: Dictionary in definition["behaviors"]:
		var considerations: Array = []
		for c: Dictionary in b["considerations"]:
			considerations.append(Build.resource("UtilityConsideration", c))
		var behavior: Resource = Build.behavior(b["name"], considerations)
		behavior.weight = b.get("weight", 1.0)
		behavior.cooldown = b.get("cooldown", 0.0)
		behaviors.append(behavior)
	var selector: Node = Build.selector(behaviors)
	for field: String in definition["settings"]:
		selector.set(field, definition["settings"][field])
	selector.name = "Selector%d" % index
	selector.behavior_changed.connect(func(behavior_name: StringName) -> void:
		changes.append([frame, index, String(behavior_name)]))
	root.add_child(selector)
	return selector


func _initialize() -> void:
	for argument in OS.get_cmdline_user_args():
		if argument.begins_with("--spec="):
			spec = JSON.parse_string(argument.trim_prefix("--spec="))
	var index := 0
	for definition: Dictionary in spec["definitions"]:
		for copy in 3:
			selectors.append(_make(definition, index))
			index += 1
	answered_at_start = NpcMindServer.get_metrics()["binding/answered_calls"]
	checked_at_start = NpcMindServer.get_metrics()["binding/checked_calls"]


## The context selector `i` gives in frame `f`: the same one for runs of frames, with the odd ones out.
func _context(i: int, f: int, second: bool) -> Dictionary:
	if i == 0 and f <= 8:  # attack by a little; then in one frame: attack (answered in C), rest, and
		# the first context again, where the running rest's momentum now wins (not the table's attack)
		return {"threat": 0.0, "calm": 0.45} if second else {"threat": 0.5, "calm": 0.45}
	var run := (f + i) / (6 if i < 6 or i >= 15 else 13)  # a context held for frames (longer where time matters)
	var threat: float = [0.0, 0.25, 0.9, 0.9, 0.4, 1.0, 0.1][(run + i) % 7]
	var calm: float = [0.2, 0.2, 0.6, 0.0][(run / 2 + i) % 4]
	if i % 3 == 1:  # a threat drifting every frame: other numbers, mostly the same choice (the kernel's check)
		threat += 0.004 * ((f + i) % 6)
	var context := {"threat": threat, "calm": calm}
	if second:
		context["threat"] = 1.0 - threat  # another context in the same frame
	match (f * 7 + i * 3) % 23:
		0: context["noise"] = f  # a key no consideration reads
		1: context["threat"] = NAN
		2: context.erase("calm")  # missing: its default, or 0
		3: context["calm"] = "calm"  # no number
		4: context["threat"] = int(round(threat))  # an int for a float
		5: context = {&"threat": threat, &"calm": calm}  # StringName keys
	return context


func _logged(value: Variant) -> Variant:
	if typeof(value) == TYPE_FLOAT and is_nan(value):
		return {"float": "nan"}
	return value


func _process(_delta: float) -> bool:
	frame += 1
	if frame == 12:  # a new selector: its first call
		selectors.append(_make(spec["definitions"][0], selectors.size()))
	if frame == 20:  # freed: no more calls
		selectors[1].free()
		selectors[1] = null
	if frame == 28:  # a changed behaviors list: the selector starts afresh on the new definition
		var other: Node = _make(spec["definitions"][1], 1000)
		selectors[0].behaviors = other.behaviors
		other.free()
	for i in selectors.size():
		var selector: Node = selectors[i]
		if selector == null:
			continue
		var times := 3 if (frame + i) % 5 == 0 or (i == 0 and frame == 4) else 1  # (the frame's, another, the first)
		for call in times:
			var context := _context(i, frame, call == 1)
			var logged := {}
			for key: Variant in context:
				logged[String(key)] = _logged(context[key])
			var answer: StringName = selector.evaluate(context)
			calls.append({"frame": frame, "now": NpcMindServer.now(), "selector": i, "context": logged,
				"types": context.values().map(func(v: Variant) -> int: return typeof(v)), "answer": String(answer)})
		if i % 4 == 0:
			scores.append([frame, i, selector.get_scores()])
	if frame < FRAMES:
		return false
	var metrics: Dictionary = NpcMindServer.get_metrics()
	var answered: float = metrics["binding/answered_calls"] - answered_at_start
	var checked: float = metrics["binding/checked_calls"] - checked_at_start
	print(JSON.stringify({"calls": calls, "changes": changes, "scores": scores, "answered": answered,
		"checked": checked}, "", false, true))
	return true
