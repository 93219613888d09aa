extends SceneTree
## UtilitySelector.set_input as per-node code calls it, for tests/test_addon_input_queue.py: the
## selectors of two definitions (one with a default input) each given inputs every frame, typed
## (StringName keys: ptrcall) and untyped (String keys, the Variant call), the same key twice in a
## frame, keys the definition does not read, NaN, a String and an int where a number goes,
## set_inputs() before and after set_input() of the same key, record_event and awareness_of calls
## between them (another queued method), a selector freed and one redefined right after its calls
## in a frame, and one added late. Each call is logged (frame, selector, key, value as given, how),
## with every frame's `choice` (read untyped, and typed through get_choice(): both answered in C once
## a batched choice is made), the behavior_changed signals and some get_scores(). One JSON line,
## with the binding's counts of calls queued and answered in C over the run, and of awareness_of
## calls (which the binding may answer too).

const Build := preload("res://tests/addon/utility_builders.gd")
const FRAMES := 40
const PER_DEFINITION := 4

var selectors: Array[Node] = []
var stream: Node
var calls: Array = []
var choices: Array = []
var changes: Array = []
var scores: Array = []
var frame := 0
var queued_at_start := 0.0
var answered_at_start := 0.0
var awareness_reads := 0


func _definition(kind: int) -> Array:
	var calm: Resource = Build.consideration("calm")
	if kind == 1:
		calm.use_default_input = true
		calm.default_input = 0.6
	return [Build.behavior("patrol", [calm]),
		Build.behavior("pursue", [Build.consideration("threat")]),
		Build.behavior("search", [Build.consideration("noise", "saturating")])]


func _make(kind: int, index: int) -> Node:
	var selector: Node = Build.selector(_definition(kind))
	selector.name = "Selector%d" % index
	selector.momentum = 0.1 * kind
	selector.behavior_changed.connect(func(behavior_name: StringName) -> void:
		changes.append([frame, index, String(behavior_name)]))
	root.add_child(selector)
	return selector


func _initialize() -> void:
	for kind in 2:
		for copy in PER_DEFINITION:
			selectors.append(_make(kind, selectors.size()))
	stream = ClassDB.instantiate("MemoryStream")
	root.add_child(stream)
	queued_at_start = NpcMindServer.get_metrics()["binding/queued_calls"]
	answered_at_start = NpcMindServer.get_metrics()["binding/answered_calls"]


func _value(i: int, k: int) -> float:
	return float((i * 5 + k * 3 + frame / 3 + k * frame) % 13) / 12.0


func _log(i: int, key: Variant, value: Variant, how: String) -> void:
	var logged: Variant = value
	if typeof(value) == TYPE_FLOAT and is_nan(value):
		logged = {"float": "nan"}
	elif typeof(value) == TYPE_STRING:
		logged = {"string": value}
	calls.append([frame, i, String(key), logged, how])


func _typed(selector: UtilitySelector, i: int, key: StringName, value: float) -> void:
	selector.set_input(key, value)
	_log(i, key, value, "typed")


func _untyped(selector: Node, i: int, key: Variant, value: Variant) -> void:
	selector.set_input(key, value)
	_log(i, key, value, "untyped")


func _feed(i: int) -> void:
	var selector: Node = selectors[i]
	var odd := (frame + i) % 7
	if i % 2 == 0:
		_typed(selector, i, &"threat", _value(i, 0))
		_typed(selector, i, &"noise", _value(i, 2))
	else:
		_untyped(selector, i, "threat", _value(i, 0))
		_untyped(selector, i, &"noise", _value(i, 2))
	stream.record_event(1000 + i, 0, 0.5)  # another queued method's calls, between these
	stream.awareness_of(1000 + i)
	awareness_reads += 1
	if i % 4 != 1 or frame % 5 != 0:  # calm left unset now and then: its last value (or default)
		_untyped(selector, i, "calm", _value(i, 1))
	match odd:
		0:
			_typed(selector, i, &"threat", 1.0 - _value(i, 0))  # the same key again: the last wins
		1:
			_untyped(selector, i, "hunger", 0.5)  # a key the definition does not read
		2:
			_untyped(selector, i, "threat", NAN)  # not finite: the Python path
			_untyped(selector, i, "threat", _value(i, 3))
		3:
			_untyped(selector, i, "noise", "loud")  # no number: said once, ignored
		4:
			_untyped(selector, i, "noise", 1)  # an int for a float
		5:
			selector.set_inputs({"threat": 0.25, "calm": 0.75})  # after set_input of the same keys
			_log(i, "threat", 0.25, "dict")
			_log(i, "calm", 0.75, "dict")
			_typed(selector, i, &"calm", 0.125)  # and set_input after it
	if i == 0 and frame % 9 == 0:  # a long run of calls on one selector (the queue's order)
		for n in 20:
			_typed(selector, i, &"noise", float(n) / 20.0)


func _process(_delta: float) -> bool:
	frame += 1
	var read := []
	for i in selectors.size():
		var typed: UtilitySelector = selectors[i]
		if typed == null:
			read.append(null)
		else:
			read.append(String(typed.get_choice()) if i % 2 == 0 else String(selectors[i].choice))
	choices.append(read)  # the choices of the frame before, made at its end
	if frame == 15:
		selectors.append(_make(0, selectors.size()))
	for i in selectors.size():
		if selectors[i] != null:
			_feed(i)
	if frame == 20:  # freed right after its calls in this frame
		selectors[2].free()
		selectors[2] = null
	if frame == 25:  # redefined right after its calls: it starts afresh on the other definition
		var other: Node = _make(1, 1000)
		selectors[3].behaviors = other.behaviors
		other.free()
		calls.append([frame, 3, "", null, "redefined"])
	for i in selectors.size():
		if selectors[i] != null and (frame + i) % 6 == 0:
			scores.append([frame, i, selectors[i].get_scores()])
	if frame < FRAMES:
		return false
	var queued: float = NpcMindServer.get_metrics()["binding/queued_calls"] - queued_at_start
	var answered: float = NpcMindServer.get_metrics()["binding/answered_calls"] - answered_at_start
	print(JSON.stringify({"calls": calls, "choices": choices, "changes": changes, "scores": scores,
		"queued": queued, "answered": answered, "awareness_reads": awareness_reads}, "", false, true))
	return true
