extends SceneTree
## Configuration mistakes of the new nodes that had no warning: a CallMethodAction whose args do not
## fit the method (the engine would print its own error at every call, every frame on_tick), an empty
## slot in a behavior's action list, a Stimulus2D whose source resolves to nothing. Each shows once in
## the configuration warnings; at run time each is one error naming the node and the fix (an empty
## slot: none, it is skipped as documented), repeats counted, and the rest keeps working. Run with
## --fixed-fps 60. One JSON line per check.

const B = preload("res://tests/addon/utility_builders.gd")

var frame := 0
var guard: Node2D
var selector: Node
var counter: Node
var loud: Node2D
var ears_memory: Node
var repeats_before := 0.0


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func _initialize() -> void:
	guard = Node2D.new()
	guard.name = "Guard"
	root.add_child(guard)
	var counting := GDScript.new()
	counting.source_code = "extends Node\nvar ticks := 0\nfunc tick(n: int, scale := 1) -> void:\n\tticks += n * scale\n"
	counting.reload()
	counter = Node.new()
	counter.name = "Counter"
	counter.set_script(counting)
	guard.add_child(counter)
	var watch: Resource = B.behavior("watch", [B.consideration("watch")])
	watch.on_enter = B.actions([
		B.resource("CallMethodAction", {"node": NodePath("../Counter"), "method": &"tick", "args": [1, 2, 3]}),
		null,
		B.resource("SetPropertyAction", {"property": &"rotation", "value": 1.0}),
	])
	watch.on_tick = B.actions([
		B.resource("CallMethodAction", {"node": NodePath("../Counter"), "method": &"tick", "args": []}),
		B.resource("CallMethodAction", {"node": NodePath("../Counter"), "method": &"tick", "args": [1]}),
		B.resource("CallMethodAction", {"node": NodePath("../Counter"), "method": &"tick", "args": [1, 2]}),
	])
	selector = B.selector([watch])
	selector.name = "Mind"
	guard.add_child(selector)

	# a listener, and two stones: one whose source is its parent (the default), one pointing nowhere
	var listener := Node2D.new()
	listener.name = "Listener"
	root.add_child(listener)
	ears_memory = ClassDB.instantiate("MemoryStream")
	listener.add_child(ears_memory)
	listener.add_child(ClassDB.instantiate("HearingSense2D"))
	var thrower := Node2D.new()
	thrower.name = "Thrower"
	thrower.position = Vector2(50, 0)
	root.add_child(thrower)
	var good: Node2D = ClassDB.instantiate("Stimulus2D")
	good.name = "Good"
	thrower.add_child(good)
	loud = ClassDB.instantiate("Stimulus2D")
	loud.name = "Loud"
	loud.source = NodePath("../Nowhere")
	thrower.add_child(loud)

	var warnings: PackedStringArray = NpcMindDesigner.get_configuration_warnings(selector)
	var expected := PackedStringArray([
		"Behavior 'watch', on_enter[0] CallMethodAction tick: method 'tick' takes 1 to 2 arguments, 3 given.",
		"Behavior 'watch': on_enter[1] is empty (it is skipped).",
		"Behavior 'watch', on_tick[0] CallMethodAction tick: method 'tick' takes 1 to 2 arguments, 0 given.",
	])
	check("one warning per action whose args do not fit, and per empty slot", warnings == expected, warnings)
	var stimulus_warnings: PackedStringArray = NpcMindDesigner.get_configuration_warnings(loud)
	check("a stimulus whose source resolves to nothing warns", stimulus_warnings.size() == 1
		and stimulus_warnings[0].begins_with("source '../Nowhere' resolves to nothing"), stimulus_warnings)
	check("a stimulus with its default source does not",
		NpcMindDesigner.get_configuration_warnings(good).is_empty(), NpcMindDesigner.get_configuration_warnings(good))
	loud.source = NodePath("..")
	var fixed: PackedStringArray = NpcMindDesigner.get_configuration_warnings(loud)
	loud.source = NodePath("../Nowhere")
	check("pointing it at a node clears the warning", fixed.is_empty(), fixed)


func _process(_delta: float) -> bool:
	frame += 1
	selector.evaluate({"watch": 1.0})
	if frame % 5 == 0 and frame <= 20:
		loud.emit()
	if frame == 5:
		repeats_before = NpcMindServer.get_metrics()["mistakes/repeats"]
	if frame == 30:
		var metrics: Dictionary = NpcMindServer.get_metrics()
		check("each mistake is reported once", metrics["mistakes/reported"] == 3.0, metrics["mistakes/reported"])
		check("the per-frame ones are counted", metrics["mistakes/repeats"] - repeats_before >= 20.0,
			[repeats_before, metrics["mistakes/repeats"]])
		# on_tick: tick(1) and tick(1, 2) each frame; on_enter's rotation set after the skipped ones
		check("the actions that fit keep running", counter.ticks >= 3 * 25 and is_equal_approx(guard.rotation, 1.0),
			[counter.ticks, guard.rotation])
		var heard: Array = ears_memory.get_memories().filter(func(m: Dictionary) -> bool: return m.entity_id == loud.get_instance_id())
		check("the stone with no source is heard as its own source", heard.size() == 1, ears_memory.get_memories())
		print(JSON.stringify({"done": true}))
		return true
	return false
