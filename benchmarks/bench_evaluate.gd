extends SceneTree
## UtilitySelector.evaluate from GDScript on the per-node path, when the numbers repeat and when they
## drift: `npcs` selectors of the game benchmark's definition (chase and search over awareness, a
## float from 0 to 3, with vetoes; wander over calm), per selector a context Dictionary made before
## the loops. Three loops a frame over the same count, their order turning each frame: repeating
## (the same numbers every frame: the binding's table answers), drifting (awareness moves a little
## every frame while the choice holds: the kernel's check answers, or Python without the kernel)
## and the baseline, the same choice written as a GDScript object. After warm-up frames, prints one
## JSON line: per loop the microseconds per call of each frame, the binding's counts of calls it
## answered and checked over the timed frames, and how many choices differ from the baseline's.

const Build := preload("res://tests/addon/utility_builders.gd")
const WARMUP := 30
const LOOPS: Array[String] = ["repeating", "drifting", "gdscript"]


class GdSelector:
	## The definition's choice by hand: awareness over 0..3, chase vetoed below 0.9, search (x 0.8)
	## below 0.3, wander at calm; the first best.
	func evaluate(context: Dictionary) -> StringName:
		var u: float = clampf(context["awareness"] / 3.0, 0.0, 1.0)
		var chase := u if u >= 0.9 else 0.0
		var search := 0.8 * u if u >= 0.3 else 0.0
		var wander: float = clampf(context["calm"], 0.0, 1.0)
		if chase >= search and chase >= wander:
			return &"chase"
		return &"search" if search >= wander else &"wander"


var npcs := 1000
var frames := 200
var frame := 0
var selectors := {"repeating": [], "drifting": []}
var baseline: Array[GdSelector] = []
var contexts := {"repeating": [], "drifting": [], "gdscript": []}
var usec := {"repeating": [], "drifting": [], "gdscript": []}
var answers := {"repeating": [], "drifting": [], "gdscript": []}
var counts_at_start := {}


func _initialize() -> void:
	for argument in OS.get_cmdline_user_args():
		if argument.begins_with("--npcs="):
			npcs = int(argument.trim_prefix("--npcs="))
		elif argument.begins_with("--frames="):
			frames = int(argument.trim_prefix("--frames="))
	var creeps: Object = load("res://benchmarks/game/creeps.gd").new()
	var behaviors: Array[UtilityBehavior] = creeps._behaviors(false)  # the game benchmark's own
	for loop: String in ["repeating", "drifting"]:
		for i in npcs:
			var selector: Node = Build.selector(behaviors)
			root.add_child(selector)
			selectors[loop].append(selector)
	for i in npcs:
		baseline.append(GdSelector.new())
	for loop: String in LOOPS:
		for i in npcs:
			contexts[loop].append({"awareness": _base(i), "calm": 0.2})
			answers[loop].append(&"")


func _base(i: int) -> float:
	return 2.85 if i % 2 == 0 else 1.5  # chase, or search


func _loop(loop: String) -> int:
	var given: Array = contexts[loop]
	var chosen: Array = answers[loop]
	var start := Time.get_ticks_usec()
	if loop == "gdscript":
		for i in npcs:
			chosen[i] = baseline[i].evaluate(given[i])
	else:
		var nodes: Array = selectors[loop]
		for i in npcs:
			var selector: UtilitySelector = nodes[i]
			chosen[i] = selector.evaluate(given[i])
	return Time.get_ticks_usec() - start


func _counts() -> Dictionary:
	var metrics: Dictionary = NpcMindServer.get_metrics()
	return {"answered": metrics["binding/answered_calls"], "checked": metrics["binding/checked_calls"]}


func _process(_delta: float) -> bool:
	frame += 1
	if frame == WARMUP:
		counts_at_start = _counts()
	for i in npcs:  # the drifting numbers (and the baseline's, the same): a little lower each frame
		var awareness := _base(i) - 0.0005 * ((frame + i) % 50)
		contexts["drifting"][i]["awareness"] = awareness
		contexts["gdscript"][i]["awareness"] = awareness
	var order := LOOPS.duplicate()
	for turn in frame % 3:
		order.push_back(order.pop_front())
	for loop: String in order:
		var spent := _loop(loop)
		if frame > WARMUP:
			usec[loop].append(float(spent) / npcs)
	if frame < WARMUP + frames:
		return false
	var wrong := 0
	for i in npcs:
		wrong += int(answers["drifting"][i] != answers["gdscript"][i]) + int(answers["repeating"][i] != answers["gdscript"][i])
	var counts := _counts()
	for name: String in counts:
		counts[name] -= counts_at_start[name]
	print(JSON.stringify({"npcs": npcs, "frames": frames, "usec": usec, "counts": counts, "wrong": wrong}))
	return true
