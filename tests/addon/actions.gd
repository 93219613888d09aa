extends SceneTree
## Actions without code, in the engine with physics on (run with --fixed-fps 60). A guard
## (CharacterBody2D) on an L-shaped NavigationRegion2D patrols to a Marker2D through its
## NavigationAgent2D: its on_enter moves it (along the agent's path, never across the missing
## corner), plays an animation and emits a signal on the guard; its on_tick calls a method every
## physics frame; when the selector switches to "rest", patrol's on_exit sets a property and calls a
## method before rest's on_enter plays an AnimatedSprite2D, and the selector emits behavior_exited
## then behavior_entered (then behavior_changed, as before). A walker with no agent steers straight to its
## marker. In 3D, a CharacterBody3D follows its NavigationAgent3D over a NavigationRegion3D, and one
## with no agent steers straight and level. A paused tree pauses the moves and the on_tick lists.
## One JSON line per check.

const B = preload("res://tests/addon/utility_builders.gd")
const PATROL_FRAMES := 240  # physics frames in patrol before the switch (it arrives in about 130)

var heard := []  # the selector's signals and the guard's, in order
var frame := 0
var physics := 0
var patrol_ticks_frames := 0  # physics frames while patrol held (entered .. exited)
var in_patrol := false
var guard: CharacterBody2D
var walker: CharacterBody2D
var agent: NavigationAgent2D
var selector: Node
var walker_selector: Node
var post: Marker2D
var post2: Marker2D
var counter: Node
var walker_counter: Node  # ticked by the go behavior's on_tick, set while it runs
var go: Resource
var anim: AnimationPlayer
var sprite: AnimatedSprite2D
var guard_path := []
var walker_path := []
var marks := {}
var walker3d: CharacterBody3D
var agent3d_body: CharacterBody3D
var agent3d: NavigationAgent3D
var goal3d := Vector3(3, 0, 4)
var heights := []


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func navigation_region() -> NavigationRegion2D:
	# An L: a bar along y = 0 and one down x = 200; the straight line from (0, 0) to (200, 200)
	# crosses the missing corner.
	var poly := NavigationPolygon.new()
	poly.vertices = PackedVector2Array([Vector2(-20, -20), Vector2(220, -20), Vector2(220, 20), Vector2(180, 20),
		Vector2(-20, 20), Vector2(220, 220), Vector2(180, 220)])
	poly.add_polygon(PackedInt32Array([0, 1, 2, 3, 4]))
	poly.add_polygon(PackedInt32Array([3, 2, 5, 6]))
	var region := NavigationRegion2D.new()
	region.navigation_polygon = poly
	return region


func _initialize() -> void:
	var world := Node2D.new()
	world.name = "World"
	root.add_child(world)
	world.add_child(navigation_region())
	post = Marker2D.new()
	post.name = "Post"
	post.position = Vector2(200, 200)
	world.add_child(post)
	post2 = Marker2D.new()
	post2.name = "Post2"
	post2.position = Vector2(-300, 150)
	world.add_child(post2)

	guard = CharacterBody2D.new()
	guard.name = "Guard"
	guard.add_user_signal("spotted", [{"name": "who", "type": TYPE_INT}, {"name": "what", "type": TYPE_STRING}])
	guard.connect("spotted", func(who: int, what: String) -> void: heard.append(["spotted", who, what]))
	world.add_child(guard)
	agent = NavigationAgent2D.new()
	guard.add_child(agent)
	anim = AnimationPlayer.new()
	anim.name = "Anim"
	var library := AnimationLibrary.new()
	var alert := Animation.new()
	alert.length = 10.0
	library.add_animation("alert", alert)
	anim.add_animation_library("", library)
	guard.add_child(anim)
	sprite = AnimatedSprite2D.new()
	sprite.name = "Sprite"
	var frames := SpriteFrames.new()
	frames.add_animation("walk")
	frames.add_frame("walk", PlaceholderTexture2D.new())
	sprite.sprite_frames = frames
	guard.add_child(sprite)
	var counting := GDScript.new()
	counting.source_code = "extends Node\nvar ticks := 0\nfunc tick(n: int) -> void:\n\tticks += n\n"
	counting.reload()
	counter = Node.new()
	counter.name = "Counter"
	counter.set_script(counting)
	guard.add_child(counter)

	var patrol: Resource = B.behavior("patrol", [B.consideration("patrol")])
	patrol.on_enter = B.actions([
		B.resource("MoveAction", {"destination": "node", "node": NodePath("../../Post"), "speed": 200.0, "arrive_distance": 4.0}),
		B.resource("PlayAnimationAction", {"animation": &"alert"}),
		B.resource("EmitSignalAction", {"signal_name": &"spotted", "args": [7, "thief"]}),
	])
	patrol.on_tick = B.actions([B.resource("CallMethodAction", {"node": NodePath("../Counter"), "method": &"tick", "args": [2]})])
	patrol.on_exit = B.actions([
		B.resource("SetPropertyAction", {"property": &"modulate:a", "value": 0.25}),
		B.resource("CallMethodAction", {"method": &"set_meta", "args": ["left_patrol", true]}),
	])
	var rest: Resource = B.behavior("rest", [B.consideration("rest")])
	rest.on_enter = B.actions([
		B.resource("PlayAnimationAction", {"player": NodePath("../Sprite"), "animation": &"walk"}),
		B.resource("SetPropertyAction", {"property": &"z_index", "value": 3}),
	])
	selector = B.selector([patrol, rest])
	guard.add_child(selector)
	selector.behavior_exited.connect(func(name: StringName) -> void:
		heard.append(["exited", String(name), guard.get_meta("left_patrol", false), guard.z_index])
		in_patrol = false)
	selector.behavior_entered.connect(func(name: StringName) -> void:
		heard.append(["entered", String(name), String(anim.current_animation), String(sprite.animation), guard.z_index])
		in_patrol = name == &"patrol")
	selector.behavior_changed.connect(func(name: StringName) -> void: heard.append(["changed", String(name)]))
	physics_frame.connect(func() -> void:
		if in_patrol and not paused:
			patrol_ticks_frames += 1)

	walker = CharacterBody2D.new()
	walker.name = "Walker"
	world.add_child(walker)
	go = B.behavior("go", [B.consideration("go")])
	go.on_enter = B.actions([B.resource("MoveAction", {"destination": "node", "node": NodePath("../../Post2"), "speed": 150.0})])
	walker_selector = B.selector([go])
	walker_counter = Node.new()
	walker_counter.name = "WalkerCounter"
	walker_counter.set_script(counting)
	walker.add_child(walker_counter)
	walker.add_child(walker_selector)
	var space := Node3D.new()
	space.name = "Space"
	root.add_child(space)
	var mesh := NavigationMesh.new()
	mesh.vertices = PackedVector3Array([Vector3(-1, 0, -1), Vector3(6, 0, -1), Vector3(6, 0, 6), Vector3(-1, 0, 6)])
	mesh.add_polygon(PackedInt32Array([0, 1, 2, 3]))
	var region3d := NavigationRegion3D.new()
	region3d.navigation_mesh = mesh
	space.add_child(region3d)
	var marker3d := Marker3D.new()
	marker3d.name = "Goal"
	marker3d.position = goal3d
	space.add_child(marker3d)
	var go3d: Resource = B.behavior("go", [B.consideration("go")])
	go3d.on_enter = B.actions([B.resource("MoveAction", {"destination": "node", "node": NodePath("../../Goal"), "speed": 3.0,
		"arrive_distance": 0.05})])
	walker3d = CharacterBody3D.new()
	walker3d.position = Vector3(0, 1, 0)  # above the floor: straight steering keeps it level
	space.add_child(walker3d)
	walker3d.add_child(B.selector([go3d]))
	agent3d_body = CharacterBody3D.new()
	space.add_child(agent3d_body)
	agent3d = NavigationAgent3D.new()
	agent3d_body.add_child(agent3d)
	agent3d_body.add_child(B.selector([go3d]))
	check("move warnings: none for a good setup", NpcMindDesigner.get_configuration_warnings(selector).is_empty()
		and NpcMindDesigner.get_configuration_warnings(walker_selector).is_empty(),
		[NpcMindDesigner.get_configuration_warnings(selector), NpcMindDesigner.get_configuration_warnings(walker_selector)])


func _physics_process(_delta: float) -> bool:
	physics += 1
	guard_path.append(guard.global_position)
	walker_path.append(walker.global_position)
	heights.append(walker3d.global_position.y)
	return false


func _process(_delta: float) -> bool:
	frame += 1
	var patrolling := frame <= PATROL_FRAMES
	selector.evaluate({"patrol": 1.0 if patrolling else 0.0, "rest": 0.0 if patrolling else 1.0})
	walker_selector.evaluate({"go": 1.0})
	walker3d.get_child(0).evaluate({"go": 1.0})
	agent3d_body.get_child(1).evaluate({"go": 1.0})
	if frame == 2:
		check("on_enter ran at the end of the choosing frame, then behavior_entered, then behavior_changed",
			heard.slice(0, 3) == [["spotted", 7, "thief"], ["entered", "patrol", "alert", "default", 0], ["changed", "patrol"]],
			heard)
		check("an AnimationPlayer plays", anim.is_playing() and anim.current_animation == "alert", anim.current_animation)
	if frame == 30:
		paused = true
		marks["paused_at"] = [walker.global_position, counter.ticks]
	if frame == 60:
		check("a paused tree pauses the moves and on_tick", marks["paused_at"] == [walker.global_position, counter.ticks]
			and walker.global_position != Vector2.ZERO, [marks["paused_at"], walker.global_position, counter.ticks])
		paused = false
	if frame == 100:  # a running behavior given an on_tick list: it runs from the next physics frame
		go.on_tick = B.actions([B.resource("CallMethodAction", {"node": NodePath("../WalkerCounter"), "method": &"tick", "args": [1]})])
		marks["physics_100"] = physics
	if frame == 150:
		var ran: int = walker_counter.ticks
		check("an on_tick list set on a running behavior runs every physics frame after",
			ran > 0 and absi(ran - (physics - marks["physics_100"])) <= 1, [ran, physics - marks["physics_100"]])
		go.on_tick = B.actions([])
		marks["walker_ticks_150"] = walker_counter.ticks
	if frame == 180:
		check("an on_tick list emptied on a running behavior stops", walker_counter.ticks == marks["walker_ticks_150"],
			[walker_counter.ticks, marks["walker_ticks_150"]])
	if frame == 200:
		marks["ticks_200"] = counter.ticks
		marks["at_200"] = guard.global_position
	if frame == PATROL_FRAMES:
		report_patrol()
	if frame == PATROL_FRAMES + 30:
		report_rest()
		print(JSON.stringify({"done": true}))
		return true
	return false


func report_patrol() -> void:
	var crossed := []
	for point: Vector2 in guard_path:
		if point.x < 150.0 and point.y > 40.0:
			crossed.append(point)
	check("the agent was given the marker's position", agent.target_position == post.global_position, agent.target_position)
	check("the guard followed the agent's path, never across the corner", crossed.is_empty() and guard_path.size() > 100,
		crossed.slice(0, 5))
	check("the guard arrived within arrive_distance", guard.global_position.distance_to(post.global_position) <= 4.0,
		[guard.global_position, post.global_position])
	check("it stops on arrival", guard.global_position == marks["at_200"] and guard.velocity == Vector2.ZERO,
		[marks["at_200"], guard.global_position, guard.velocity])
	check("on_tick runs every physics frame while the behavior holds", counter.ticks == 2 * patrol_ticks_frames
		and counter.ticks > 2 * 200, [counter.ticks, patrol_ticks_frames])
	var off_line := []
	var goal: Vector2 = post2.global_position
	for point: Vector2 in walker_path:
		if absf(point.cross(goal)) > 1e-2 * goal.length():  # off the line from (0, 0) to the marker
			off_line.append(point)
	check("with no agent the body steers straight to the node", off_line.is_empty()
		and walker.global_position.distance_to(goal) <= 8.0, [off_line.slice(0, 5), walker.global_position])
	var level := heights.all(func(y: float) -> bool: return is_equal_approx(y, 1.0))
	var flat_goal := Vector3(goal3d.x, 1.0, goal3d.z)
	check("3D with no agent: straight and level to the node", level
		and walker3d.global_position.distance_to(flat_goal) <= 0.05, [walker3d.global_position, heights.slice(-3)])
	check("3D through a NavigationAgent3D", agent3d.target_position == goal3d
		and agent3d_body.global_position.distance_to(goal3d) <= 0.1, [agent3d.target_position, agent3d_body.global_position])
	var recent: Array = selector.get_recent_actions()
	var ticked: Array = recent.filter(func(e: Dictionary) -> bool: return e.phase == "on_tick")
	check("the history has each action, a repeated tick counted once", recent.size() == 4 and ticked.size() == 1
		and ticked[0].times == counter.ticks / 2 and ticked[0].action == "CallMethodAction tick" and ticked[0].ok
		and recent[0].action == "MoveAction ../../Post" and recent[0].phase == "on_enter" and recent[0].behavior == "patrol",
		recent)


func report_rest() -> void:
	var switched: Array = heard.slice(3)
	check("a change runs on_exit, behavior_exited, on_enter, behavior_entered, behavior_changed, in order",
		switched == [["exited", "patrol", true, 0], ["entered", "rest", "alert", "walk", 3], ["changed", "rest"]], heard)
	check("on_exit set the property", is_equal_approx(guard.modulate.a, 0.25), guard.modulate)
	check("an AnimatedSprite2D plays", sprite.is_playing() and sprite.animation == &"walk", sprite.animation)
	check("on_tick stops when the behavior ends", counter.ticks == 2 * patrol_ticks_frames, [counter.ticks, patrol_ticks_frames])
	var phases: Array = selector.get_recent_actions().map(func(e: Dictionary) -> String: return "%s %s" % [e.behavior, e.phase])
	check("the history ends with the exit and the enter", phases.slice(-4) == ["patrol on_exit", "patrol on_exit",
		"rest on_enter", "rest on_enter"], phases)
