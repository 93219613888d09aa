extends SceneTree
## The thread rule on UtilitySelector's per-frame calls: evaluate, set_input, set_inputs and
## `choice` from a GDScript Thread are each refused with WrongThreadError naming the method (the
## node's own check, taken without a call into the server), and the selector's state is untouched:
## the main thread's next choice is what it would have been. Prints one JSON line per check.

const Build := preload("res://tests/addon/utility_builders.gd")
var selector: Node  # outside the tree: the engine's own thread guard skips those
var from_thread: Array = []


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func call_from_thread() -> void:
	from_thread.append(selector.evaluate({"calm": 0.0, "threat": 1.0}))
	selector.set_input(&"threat", 1.0)
	selector.set_inputs({"threat": 1.0})
	from_thread.append(selector.choice)


func _initialize() -> void:
	NpcMindServer.clock = "manual"
	selector = Build.selector([Build.behavior("patrol", [Build.consideration("calm")]),
		Build.behavior("pursue", [Build.consideration("threat")])])
	var first: StringName = selector.evaluate({"calm": 1.0, "threat": 0.0})
	var worker := Thread.new()
	worker.start(call_from_thread)
	worker.wait_to_finish()
	NpcMindServer.advance(0.1)
	check("the thread's calls returned nothing", from_thread.all(func(v: Variant) -> bool: return v == null),
		from_thread)
	var again: StringName = selector.evaluate({"calm": 1.0, "threat": 0.0})
	check("the main thread's choice is unchanged", first == &"patrol" and again == &"patrol"
		and selector.choice == &"", [first, again, selector.choice])
	selector.free()
	print(JSON.stringify({"done": true}))
	quit(0)
