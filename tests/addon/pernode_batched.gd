extends SceneTree
## The batched path fed by the nodes themselves: each guard's own _process calls
## UtilitySelector.set_input, the server chooses for the whole definition at the end of that frame
## (behavior_changed emitted in that same frame), and each node reads its choice as `choice`; the
## choices equal the Dictionary path's for the same inputs. Prints one JSON line per check.

const Build := preload("res://tests/addon/utility_builders.gd")
const GUARDS := 24
const GUARD_SOURCE := """extends Node
var selector: Node
var inputs := {}
var fed_frame := -1
var changed_frames: Array[int] = []

func _ready() -> void:
	selector.behavior_changed.connect(func(_name: StringName) -> void: changed_frames.append(Engine.get_process_frames()))

func _process(_delta: float) -> void:
	for key in inputs:
		selector.set_input(key, inputs[key])
	fed_frame = Engine.get_process_frames()
"""

var guards: Array[Node] = []
var twins: Array[Node] = []  # the same definition on the Dictionary path
var rng := RandomNumberGenerator.new()
var round_index := 0
var before_any: Array = []
var failures: Array = []


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func _initialize() -> void:
	rng.seed = 11
	var script := GDScript.new()
	script.source_code = GUARD_SOURCE
	script.reload()
	var behaviors := [Build.behavior("patrol", [Build.consideration("calm")]),
		Build.behavior("pursue", [Build.consideration("threat")]),
		Build.behavior("search", [Build.consideration("noise")])]
	for i in GUARDS:
		var selector: Node = Build.selector(behaviors)
		var guard := Node.new()
		guard.set_script(script)
		guard.selector = selector
		guard.add_child(selector)
		root.add_child(guard)
		guards.append(guard)
		var twin: Node = Build.selector(behaviors)
		root.add_child(twin)
		twins.append(twin)
		before_any.append(selector.choice)


func _process(_delta: float) -> bool:
	# Runs before the guards' _process each frame: check the last frame's choices, then new inputs.
	if round_index > 0:
		var wrong := []
		var late := []
		for i in GUARDS:
			var guard: Node = guards[i]
			var expected: StringName = twins[i].evaluate(guard.inputs)
			if guard.selector.choice != expected:
				wrong.append([i, guard.selector.choice, expected])
			for frame in guard.changed_frames:
				if frame != guard.fed_frame:
					late.append([i, frame, guard.fed_frame])
			guard.changed_frames.clear()
		if not wrong.is_empty() or not late.is_empty():
			failures.append({"round": round_index, "wrong": wrong, "late": late})
	if round_index == 4:
		check("no choice before the first frame", before_any.all(func(c: StringName) -> bool: return c == &""), before_any)
		check("each node reads the choice for its own inputs, made in the frame it set them", failures.is_empty(), failures)
		var ids := PackedInt32Array()
		var names: PackedStringArray = guards[0].selector.get_behavior_names()
		var agree := true
		for guard in guards:
			ids.append(guard.selector.get_server_id())
		var choices: PackedInt32Array = NpcMindServer.get_choices(ids)
		var seen := {}
		for i in GUARDS:
			agree = agree and names[choices[i]] == guards[i].selector.choice
			seen[guards[i].selector.choice] = true
		check("choice is get_choices' pick, every behaviour chosen by someone", agree and seen.size() == 3, seen.keys())
		check("one group for the definition", NpcMindServer.get_monitor("selectors/groups") == 1.0)
		print(JSON.stringify({"done": true}))
		return true
	for guard in guards:
		guard.inputs = {&"calm": rng.randf(), &"threat": rng.randf(), &"noise": rng.randf()}
	round_index += 1
	return false

