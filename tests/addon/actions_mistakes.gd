extends SceneTree
## Bad action configuration: one configuration warning per mistake in the editor's list, and at run
## time one error per mistake naming the selector, the behavior, the action and the fix, never one
## per frame (an on_tick mistake repeats every physics frame: it is counted, not printed). The bad
## actions are skipped; the good ones in the same lists keep running and the selector keeps
## choosing. Run with --fixed-fps 60. One JSON line per check.

const B = preload("res://tests/addon/utility_builders.gd")

var frame := 0
var guard: Node2D
var selector: Node
var counter: Node
var entered := []
var mover_selector: Node
var mover: CharacterBody2D


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func _initialize() -> void:
	var world := Node2D.new()
	world.name = "World"
	root.add_child(world)
	var post := Marker2D.new()
	post.name = "Post"
	world.add_child(post)
	guard = Node2D.new()  # not a CharacterBody2D: nothing to move
	guard.name = "Guard"
	world.add_child(guard)
	var counting := GDScript.new()
	counting.source_code = "extends Node\nvar ticks := 0\nfunc tick(n: int) -> void:\n\tticks += n\n"
	counting.reload()
	counter = Node.new()
	counter.name = "Counter"
	counter.set_script(counting)
	guard.add_child(counter)

	var watch: Resource = B.behavior("watch", [B.consideration("watch")])
	watch.on_enter = B.actions([
		B.resource("SetPropertyAction", {"node": NodePath("../Nowhere"), "property": &"visible", "value": false}),
		B.resource("SetPropertyAction", {"property": &"no_such_property", "value": 1}),
		B.resource("CallMethodAction", {"method": &"no_such_method"}),
		B.resource("MoveAction", {"destination": "node", "node": NodePath("../../Post")}),
		B.resource("SetPropertyAction", {"property": &"rotation", "value": 1.0}),
		B.resource("PlayAnimationAction", {"animation": &"alert"}),
		B.resource("SetPropertyAction", {"property": &"z_index", "value": 2.0}),  # a float the engine makes an int
		B.resource("SetPropertyAction", {"property": &"rotation", "value": "fast"}),  # text is no angle
	])
	watch.on_tick = B.actions([
		B.resource("CallMethodAction", {"method": &"no_such_tick"}),
		B.resource("CallMethodAction", {"node": NodePath("../Counter"), "method": &"tick", "args": [1]}),
	])
	var calm: Resource = B.behavior("calm", [B.consideration("calm")])
	calm.on_enter = B.actions([B.resource("SetPropertyAction", {"property": &"rotation", "value": 2.0})])
	selector = B.selector([watch, calm])
	selector.name = "Mind"
	guard.add_child(selector)
	selector.behavior_entered.connect(func(name: StringName) -> void: entered.append(String(name)))

	mover = CharacterBody2D.new()
	mover.name = "Mover"
	world.add_child(mover)
	var plain := Node.new()
	plain.name = "Plain"
	mover.add_child(plain)
	var go: Resource = B.behavior("go", [B.consideration("go")])
	go.on_enter = B.actions([B.resource("MoveAction", {"destination": "node", "node": NodePath("../Plain")})])
	mover_selector = B.selector([go])
	mover_selector.name = "Mind"
	mover.add_child(mover_selector)

	var hidden: Resource = B.resource("MoveAction", {"destination": "target"})
	var usage := {}
	for prop: Dictionary in hidden.get_property_list():
		usage[prop.name] = prop.usage
	check("the inspector shows a move's fields for its destination", usage["node"] == PROPERTY_USAGE_STORAGE
		and usage["flee_distance"] == PROPERTY_USAGE_STORAGE and usage["speed"] & PROPERTY_USAGE_EDITOR, usage)

	var warnings: PackedStringArray = NpcMindDesigner.get_configuration_warnings(selector)
	var expected := [
		"Behavior 'watch', on_enter[0] SetPropertyAction visible: node '../Nowhere' resolves to no node",
		"Behavior 'watch', on_enter[1] SetPropertyAction no_such_property: Node2D 'Guard' has no property 'no_such_property'.",
		"Behavior 'watch', on_enter[2] CallMethodAction no_such_method: Node2D 'Guard' has no method 'no_such_method'.",
		"Behavior 'watch', on_enter[3] MoveAction ../../Post: No body to move: Node2D 'Guard' is not a CharacterBody2D/3D",
		"Behavior 'watch', on_enter[5] PlayAnimationAction alert: player '' is not an AnimationPlayer or AnimatedSprite2D/3D.",
		"Behavior 'watch', on_enter[7] SetPropertyAction rotation: property 'rotation' of Node2D 'Guard' is a float, but value is a String: give value the property's type.",
		"Behavior 'watch', on_tick[0] CallMethodAction no_such_tick: Node2D 'Guard' has no method 'no_such_tick'.",
	]
	var matched := warnings.size() == expected.size()
	for i in mini(warnings.size(), expected.size()):
		matched = matched and warnings[i].begins_with(expected[i])
	check("one configuration warning per mistake, naming the behavior and the action", matched, warnings)


func _process(_delta: float) -> bool:
	frame += 1
	var watching := frame <= 30
	selector.evaluate({"watch": 1.0 if watching else 0.0, "calm": 0.0 if watching else 1.0})
	mover_selector.evaluate({"go": 1.0})
	if frame == 30:
		var metrics: Dictionary = NpcMindServer.get_metrics()
		check("each mistake reported once", metrics["mistakes/reported"] == 8.0, metrics["mistakes/reported"])
		check("the per-frame mistake's repeats are counted", metrics["mistakes/repeats"] >= 25.0, metrics["mistakes/repeats"])
		check("the good actions in the same lists ran", is_equal_approx(guard.rotation, 1.0) and counter.ticks >= 25
			and guard.z_index == 2, [guard.rotation, counter.ticks, guard.z_index])
		check("a move to a node with no position stops", mover.global_position == Vector2.ZERO
			and mover.velocity == Vector2.ZERO, [mover.global_position, mover.velocity])
		var failed: Array = selector.get_recent_actions().filter(func(e: Dictionary) -> bool: return not e.ok)
		check("the history marks the skipped actions", failed.size() == 7, failed)
	if frame == 40:
		check("the selector keeps choosing and acting", entered == ["watch", "calm"] and is_equal_approx(guard.rotation, 2.0),
			[entered, guard.rotation])
		print(JSON.stringify({"done": true}))
		return true
	return false
