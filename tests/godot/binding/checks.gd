extends SceneTree
## Binding checks, driven headless by tests/test_binding_core.py. One JSON line per check:
## {"check": name, "ok": bool, "got": ...}. Frame-based steps run from _process.

var frame := 0
var stage: Node
var probe: Probe
var faulty: Faulty
var signal_values: Array = []
var awaited: Array = []
var threads: Array = []
var baseline_instances := 0
var thread_results: Array = []
var mixed: Node


func check(name: String, ok: bool, got: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "got": var_to_str(got)}))


func _initialize() -> void:
	baseline_instances = Probe.live_instances()
	check_registration()
	check_calls()
	check_properties()
	check_signals()
	check_scene_round_trip()
	check_refcounted()
	check_many_instances()
	stage = load("res://probe_scene.tscn").instantiate()
	root.add_child(stage)
	probe = stage.get_node("Probe")
	mixed = ClassDB.instantiate("MixedInNode")
	root.add_child(mixed)
	faulty = Faulty.new()
	stage.add_child(faulty)


func check_registration() -> void:
	check("class_exists", ClassDB.class_exists("Probe") and ClassDB.class_exists("ProbeData"))
	check("parent_class", ClassDB.get_parent_class("Probe") == "Node", ClassDB.get_parent_class("Probe"))
	check("resource_parent", ClassDB.get_parent_class("ProbeData") == "Resource")
	check("has_signal", ClassDB.class_has_signal("Probe", "pinged"))
	check("constant", ClassDB.class_get_integer_constant("Probe", "MAX_LEVEL") == 5)
	var enum_values := ClassDB.class_get_enum_constants("Probe", "Mood")
	check("enum", enum_values == PackedStringArray(["CALM", "ANGRY", "SCARED"]), enum_values)
	check("enum_value", ClassDB.class_get_integer_constant("Probe", "ANGRY") == 1)
	var hints := {}
	for prop in ClassDB.class_get_property_list("Probe", true):
		hints[prop["name"]] = prop
	check("property_list", hints.has("speed") and hints.has("profile") and hints.has("weights"), hints.keys())
	check("range_hint", hints["speed"]["hint"] == PROPERTY_HINT_RANGE and hints["speed"]["hint_string"] == "0,10,0.1", hints["speed"])
	check("enum_hint", hints["mood"]["hint"] == PROPERTY_HINT_ENUM and hints["mood"]["hint_string"].begins_with("Calm:0"), hints["mood"])
	check("resource_hint", hints["profile"]["hint"] == PROPERTY_HINT_RESOURCE_TYPE and hints["profile"]["hint_string"] == "ProbeData", hints["profile"])
	check("typed_property", hints["weights"]["type"] == TYPE_PACKED_FLOAT32_ARRAY and hints["spot"]["type"] == TYPE_VECTOR3)
	check("group", hints.has("Advanced"), hints.get("Advanced"))
	check("typed_array_hint", hints["datas"]["hint"] == PROPERTY_HINT_TYPE_STRING and hints["datas"]["hint_string"] == "24/17:ProbeData", hints["datas"])
	check("method_list", ClassDB.class_has_method("Probe", "add") and ClassDB.class_has_method("Probe", "set_speed"))
	check("private_hidden", not ClassDB.class_has_method("Probe", "_count_changed"))
	check("refcounted_class", ClassDB.is_parent_class("Counter", "RefCounted"))
	check("abstract_class", ClassDB.class_exists("AbstractBase") and not ClassDB.can_instantiate("AbstractBase"))
	var concrete: Node = ClassDB.instantiate("ConcreteProbe")
	check("python_parent_and_renamed", ClassDB.get_parent_class("ConcreteProbe") == "AbstractBase" and concrete.exposed_under_another_name() == 5 and concrete.is_class("AbstractBase"))
	concrete.free()


func check_calls() -> void:
	var p: Probe = Probe.new()
	check("typed_int", p.add(2, 3) == 5, p.add(2, 3))
	check("typed_float", is_equal_approx(p.scale(2.0), 3.0), p.scale(2.0))
	check("typed_string", p.concat("ab", "cd") == "abcd")
	check("typed_packed", is_equal_approx(p.sum_packed(PackedFloat32Array([1.0, 2.0, 3.5])), 6.5))
	check("typed_dict", p.count_keys({"a": 1, "b": 2, "c": 3}) == 3)
	check("packed_return", p.doubled(PackedInt32Array([1, 2, 3])) == PackedInt32Array([2, 4, 6]))
	check("default_arg", p.with_default(3) == 30 and p.with_default(3, 2) == 6)
	var u: Variant = p
	check("untyped_int", u.add(2, 3) == 5)
	check("untyped_coerce", is_equal_approx(u.scale(2), 3.0), u.scale(2))
	check("untyped_default_arg", u.with_default(4) == 40 and u.with_default(4, 3) == 12)
	check("callv", p.callv("add", [4, 5]) == 9 and p.call("concat", "x", "y") == "xy")
	var big := PackedFloat32Array()
	big.resize(1000)
	big.fill(0.5)
	check("packed_1000", is_equal_approx(u.sum_packed(big), 500.0))
	var values := [null, true, 7, 2.5, "text", &"name", NodePath("a/b"), Vector2(1, 2), Vector2i(3, 4),
		Vector3(1, 2, 3), Vector3i(1, 2, 3), Vector4(1, 2, 3, 4), Color(0.5, 0.25, 1, 1), Rect2(1, 2, 3, 4),
		Quaternion(0, 0, 0, 1), Transform2D(0.5, Vector2(3, 4)), Basis(), Transform3D(), AABB(Vector3(1, 2, 3), Vector3(4, 5, 6)),
		Plane(0, 1, 0, 2), [1, "two", [3]], {"k": [1, 2], 3: "x"}, PackedByteArray([1, 2, 255]),
		PackedInt64Array([1 << 40]), PackedFloat64Array([0.125]), PackedStringArray(["a", "b"]),
		PackedVector2Array([Vector2(1, 2)]), PackedVector3Array([Vector3(1, 2, 3)]), PackedColorArray([Color(1, 0, 0)])]
	var bad := []
	for value in values:
		var back: Variant = p.echo(value)
		if typeof(back) != typeof(value) or back != value:
			bad.append([type_string(typeof(value)), value, back])
	check("variant_echo", bad.is_empty(), bad)
	check("object_echo", p.echo(p) == p)
	check_containers(p, u)
	check("static_method", Probe.live_instances() >= 1)
	var statics: Array = p.static_engine_calls("res://quit.gd")
	check("static_engine_method", statics == [true, false, FileAccess.get_file_as_string("res://quit.gd")] and statics[2].length() > 0, statics)
	var scripted := Node.new()
	var script := GDScript.new()
	script.source_code = "extends Node\nvar health := 7\nfunc doubled_by_script(x: int) -> int:\n\treturn x * 2\n"
	script.reload()
	scripted.set_script(script)
	check("script_members_from_python", p.call_script(scripted) == 42 + 8 and scripted.health == 8)
	scripted.free()
	check("to_string", str(p) == "<Probe 3>", str(p))
	p.speak()
	p.free()


func check_containers(p: Probe, u: Variant) -> void:
	var nested := {"a": {"b": [1, {"c": 2.5}, []]}, 3: [[], {}], &"sn": "x", -4: null, 1.5: true, false: Vector2i(1, 2), "": ""}
	var large := {}
	for i in 2000:
		large["key%d" % i] = i * 0.5
	var bad := []
	for value in [nested, {}, large, [nested, [{}, []], large]]:
		for back in [p.echo(value), u.echo(value)]:
			if typeof(back) != typeof(value) or back != value:
				bad.append([value, back])
	check("container_round_trip", bad.is_empty(), bad)
	var typed_dict: Dictionary = p.copy_dict(nested)
	var untyped_dict: Dictionary = u.copy_dict(nested)
	check("typed_dict_return", typed_dict == nested and untyped_dict == nested and p.copy_dict({}).is_empty() and p.copy_dict(large) == large, typed_dict)
	var typed_list: Array = p.copy_list([1, "two", {"k": []}])
	check("typed_array_return", typed_list == [1, "two", {"k": []}] and u.copy_list([]) == [], typed_list)
	var kinds := p.key_types({"s": 1, &"n": 2, 3: 3, 4.5: 4, true: 5, null: 7})
	check("key_types_to_python", kinds == PackedStringArray(["str", "StringName", "int", "float", "bool", "NoneType"]), kinds)
	var ordered := {"z": 1, "a": 2, "m": 3}
	check("key_order", p.copy_dict(ordered).keys() == ["z", "a", "m"] and u.echo(ordered).keys() == ["z", "a", "m"])
	var built: Dictionary = p.built_dict()
	var shapes := [typeof(built.keys()[0]), typeof(built.keys()[1]), typeof(built[&"name"]), typeof(built.keys()[2]), typeof(built[NodePath("a/b")]), typeof(built.keys()[3]), typeof(built[7]), typeof(built.keys()[4]), typeof(built.keys()[5]), typeof(built["vector"])]
	var want_shapes := [TYPE_STRING, TYPE_STRING_NAME, TYPE_STRING_NAME, TYPE_NODE_PATH, TYPE_NODE_PATH, TYPE_INT, TYPE_FLOAT, TYPE_FLOAT, TYPE_BOOL, TYPE_VECTOR2]
	var built_ok: bool = shapes == want_shapes and built[2.5] == true and built[false] == null \
		and built["nested"] == {"list": [1, [2, 3], {"deep": []}], "empty": {}} and built["enum"] == 1 \
		and typeof(built["enum"]) == TYPE_INT and built["tuple"] == [1, "two"] and built["large"].size() == 1000 \
		and built["large"]["k999"] == 999 and built.size() == 11
	check("python_built_dict", built_ok, [shapes, built])
	check("python_dict_into_engine_call", p.meta_round_trip())
	var facts := [p.packed_facts(PackedByteArray([1, 2, 255])), p.packed_facts(PackedInt32Array([-1, 7])),
		p.packed_facts(PackedInt64Array([1 << 40])), p.packed_facts(PackedFloat32Array()),
		p.packed_facts(PackedFloat64Array([0.125])), p.packed_facts(PackedFloat32Array([1.5, -2.0]))]
	var want_facts := ["uint8 (3,) True True [1, 2, 255]", "int32 (2,) True True [-1, 7]",
		"int64 (1,) True True [1099511627776]", "float32 (0,) True True []", "float64 (1,) True True [0.125]",
		"float32 (2,) True True [1.5, -2.0]"]
	check("packed_arguments", facts == want_facts, facts)
	var scaled: Variant = u.scaled_dict({"a": [1, {&"b": 2.5}], 4: {}})
	var want_scaled := {"a": [[1, {&"b": 2.5}], [2, 2], {2: ["a"]}], 4: [{}, [2, 2], {2: [4]}]}
	check("python_path_containers", scaled == want_scaled and u.scaled_dict({}, 3) == {} \
		and typeof(scaled["a"][0][1].keys()[0]) == TYPE_STRING_NAME, scaled)
	check("cyclic_python_list_refused", p.cyclic_refused())
	var tree: Array = ["leaf"]
	for level in 10:
		var wide := []
		for i in 30:
			wide.append(tree)
		tree = wide
	var shared := [1, 2]
	var shared_facts: String = p.shared_tree_facts(tree, {"a": shared, "b": shared})
	check("shared_containers_read_once", shared_facts == "10 ['leaf'] True [1, 2]" and u.shared_tree_facts(tree, {"a": shared, "b": shared}) == shared_facts, shared_facts)
	# Only depths go into `got`: printing a shared tree would expand its 30 ** 10 paths.
	var written: Array = u.shared_written(tree)
	var written_depths := [shared_depth(p.shared_tree(10)), shared_depth(u.shared_tree(10)), shared_depth(written[0])]
	var pairs_shared: bool = is_same(written[1][0], written[1][1]) and is_same(written[2]["a"], written[2]["b"]) \
		and is_same(written[3][0], written[3][1]) and is_same(written[1][0], written[3][0]) and written[1][0] == [1, 2] \
		and not is_same(written[4][0], written[4][1]) and not is_same(written[4][2], written[4][3]) and written[4] == [[], [], [1, 2], [1, 2]]
	check("shared_containers_written_once", written_depths == [10, 10, 10] and pairs_shared, [written_depths, pairs_shared])
	var refused: String = p.self_containing_written()
	check("self_containing_written_refused", refused == "a list that contains itself cannot be converted to an Array | a dict that contains itself cannot be converted to a Dictionary | a list that contains itself cannot be converted to an Array", refused)
	var loop := [1]
	loop.append(loop)
	var loop_dict := {}
	loop_dict["self"] = [loop_dict]
	p.set_meta("loop", loop)
	p.set_meta("loop_dict", loop_dict)
	var loop_error: String = p.self_containing_meta()
	check("self_containing_refused", loop_error == "an Array that contains itself cannot be converted to Python | a Dictionary that contains itself cannot be converted to Python", loop_error)
	p.remove_meta("loop")
	p.remove_meta("loop_dict")
	loop.clear()
	loop_dict.clear()
	var reused := []
	for i in 300:
		var fresh := {("é%03d" % i): ("v%03d" % (i % 7)), ("k%03d" % (i % 5)): i}
		var fresh_back: Variant = u.echo(fresh)
		if fresh_back != fresh or p.key_types(fresh) != PackedStringArray(["str", "str"]):
			reused.append([fresh, fresh_back])
	check("text_reread_each_time", reused.is_empty(), reused)
	var long_text := "abé".repeat(5000)
	var texts := {"été": "日本😀", &"ñ": "", "": &"日", "long": long_text, long_text: NodePath("é/b")}
	var text_back: Variant = u.echo(texts)
	var text_kinds := p.key_types(texts)
	check("text_round_trip", text_back == texts and typeof(text_back[""]) == TYPE_STRING_NAME and typeof(text_back[long_text]) == TYPE_NODE_PATH \
		and text_kinds == PackedStringArray(["str", "StringName", "str", "str", "str"]) and p.concat("é", long_text) == "é" + long_text, text_kinds)


func check_properties() -> void:
	var p := Probe.new()
	check("defaults", p.speed == 1.5 and p.count == 3 and p.title == "hi" and p.offset == Vector2(1, 2) and p.mood == Probe.CALM and p.profile == null)
	p.speed = 2.5
	p.count = 4
	p.flag = true
	p.title = "hello"
	p.tag = &"tagged"
	p.target = NodePath("../Other")
	p.offset = Vector2(5, 6)
	p.spot = Vector3(1, 2, 3)
	p.tint = Color(0, 1, 0, 1)
	p.items = [1, "a"]
	p.table = {"x": 1}
	p.names = PackedStringArray(["n1", "n2"])
	p.ids = PackedInt32Array([7, 8])
	p.weights = PackedFloat32Array([0.5])
	p.mood = Probe.ANGRY
	var got := [p.speed, p.count, p.flag, p.title, p.tag, p.target, p.offset, p.spot, p.tint, p.items, p.table, p.names, p.ids, p.weights, p.mood]
	var want := [2.5, 4, true, "hello", &"tagged", NodePath("../Other"), Vector2(5, 6), Vector3(1, 2, 3), Color(0, 1, 0, 1), [1, "a"], {"x": 1}, PackedStringArray(["n1", "n2"]), PackedInt32Array([7, 8]), PackedFloat32Array([0.5]), 1]
	check("property_round_trip", got == want, got)
	check("property_types", typeof(p.tag) == TYPE_STRING_NAME and typeof(p.target) == TYPE_NODE_PATH and typeof(p.weights) == TYPE_PACKED_FLOAT32_ARRAY)
	p.set("speed", 3)
	check("set_get_by_name", p.get("speed") == 3.0 and typeof(p.get("speed")) == TYPE_FLOAT)
	check("setter_ran", p.frame_counts()["setter"] == 1, p.frame_counts())
	var usage := {}
	for prop in p.get_property_list():
		usage[prop["name"]] = prop["usage"]
	p.flag = false
	var hidden: int = -1
	for prop in p.get_property_list():
		if prop["name"] == "limit":
			hidden = prop["usage"]
	check("validate_property", usage["limit"] == PROPERTY_USAGE_DEFAULT and hidden == PROPERTY_USAGE_STORAGE, [usage["limit"], hidden])
	var data := ProbeData.new()
	data.level = 4
	p.profile = data
	check("resource_property", p.profile == data and p.profile.level == 4)
	p.free()


func check_signals() -> void:
	var p := Probe.new()
	p.pinged.connect(func(v: int) -> void: signal_values.append(v))
	p.ping(4)
	p.emit_signal("pinged", 5)
	check("signal_connect", signal_values == [4, 5], signal_values)
	wait_for_ping(p)
	p.ping(6)
	check("signal_await", awaited == [6], awaited)
	p.listen(p)
	p.ping(9)
	p.notify_property_list_changed()
	check("python_callables", Array(p.history()) == ["heard 9", "properties changed"], p.history())
	p.name = "Named"
	check("object_argument", p.takes_node(p, "!") == "Named!")
	p.free()


func wait_for_ping(p: Probe) -> void:
	var value: int = await p.pinged
	awaited.append(value)


func check_scene_round_trip() -> void:
	var root_node := Node.new()
	root_node.name = "Root"
	var p := Probe.new()
	p.name = "Probe"
	root_node.add_child(p)
	p.owner = root_node
	p.speed = 7.25
	p.title = "saved"
	p.spot = Vector3(4, 5, 6)
	p.weights = PackedFloat32Array([1.5, 2.5])
	p.names = PackedStringArray(["s"])
	p.table = {"k": 2}
	p.mood = Probe.SCARED
	var data := ProbeData.new()
	data.level = 9
	data.label = "inner"
	p.profile = data
	var packed := PackedScene.new()
	check("pack", packed.pack(root_node) == OK)
	root_node.free()
	check("save", ResourceSaver.save(packed, "user://round_trip.tscn") == OK)
	var text := FileAccess.get_file_as_string("user://round_trip.tscn")
	check("tscn_text", text.contains("speed = 7.25") and text.contains("type=\"Probe\"") and text.contains("level = 9"), text)
	var loaded: Node = ResourceLoader.load("user://round_trip.tscn", "", ResourceLoader.CACHE_MODE_IGNORE).instantiate()
	var q: Probe = loaded.get_node("Probe")
	var ok := q.speed == 7.25 and q.title == "saved" and q.spot == Vector3(4, 5, 6) and q.weights == PackedFloat32Array([1.5, 2.5])
	ok = ok and q.names == PackedStringArray(["s"]) and q.table == {"k": 2} and q.mood == Probe.SCARED and q.count == 3
	check("scene_round_trip", ok, [q.speed, q.title, q.spot, q.weights, q.names, q.table, q.mood])
	check("resource_round_trip", q.profile is ProbeData and q.profile.level == 9 and q.profile.label == "inner", q.profile)
	loaded.free()
	var standalone := ProbeData.new()
	standalone.level = 11
	standalone.label = "alone"
	check("tres_save", ResourceSaver.save(standalone, "user://probe_data.tres") == OK)
	var reloaded = ResourceLoader.load("user://probe_data.tres", "", ResourceLoader.CACHE_MODE_IGNORE)
	check("tres_round_trip", reloaded is ProbeData and reloaded.level == 11 and reloaded.label == "alone", reloaded)


func check_refcounted() -> void:
	var before: int = Probe.live_instances()
	var c := Counter.new()
	c.bump()
	check("refcounted_call", c.bump() == 2 and c.value == 2)
	check("refcounted_alive", Probe.live_instances() == before + 1)
	c = null
	# Python's own reference goes at the next main-loop turn (checked in _process).


## How many levels of `tree` are one Array shared by all 30 places, down to ["leaf"] (-1 if not).
func shared_depth(tree: Array) -> int:
	var depth := 0
	while tree.size() == 30:
		for item in tree:
			if not is_same(item, tree[0]):
				return -1
		depth += 1
		tree = tree[0]
	return depth if tree == ["leaf"] else -1


func check_many_instances() -> void:
	var before: int = Probe.live_instances()
	for i in 10000:
		var n := Probe.new()
		n.count = i
		n.free()
	check("ten_thousand_freed", Probe.live_instances() == before, Probe.live_instances() - before)
	for i in 10000:
		var r := Counter.new()
		r.bump()


func _process(_delta: float) -> bool:
	frame += 1
	if frame == 3:
		check("mixin_virtual", mixed.times_entered() == 1, mixed.times_entered())
		mixed.free()
		# Every Probe, Counter and ProbeData made in _initialize is gone: the scene's Probe, its ProbeData and Faulty remain.
		check("refcounted_freed", Probe.live_instances() == baseline_instances + 3, Probe.live_instances() - baseline_instances)
		check("virtuals_order", Array(probe.history()) == ["enter_tree", "notification_ready", "ready"] or Array(probe.history()) == ["enter_tree", "ready", "notification_ready"], probe.history())
		check("loaded_scene_values", probe.speed == 4.5 and probe.title == "from tscn" and probe.mood == Probe.ANGRY and probe.profile != null and probe.profile.level == 3, [probe.speed, probe.title, probe.mood])
		check("engine_calls", probe.make_children(3) == 2 and probe.get_child_count() == 3 and probe.first_child().name == "Kid0")
		check("engine_property_from_python", probe.get_node("Kid2").position == Vector2(2, 4))
		var kept: Counter = probe.keep_counter()
		kept.bump()
		kept = null
		var event := InputEventAction.new()
		event.action = &"jump"
		event.pressed = true
		Input.parse_input_event(event)
		var xml := XMLParser.new()
		var doc: String = probe.doc_xml()
		var parsed := xml.open_buffer(doc.to_utf8_buffer()) == OK
		while parsed and xml.read() == OK:
			pass
		check("doc_xml", parsed and doc.contains("<brief_description>A node exercising every part of the binding.</brief_description>") and doc.contains("How fast."), doc)
		for job in [func() -> Variant: return probe.add(1, 2), func() -> Variant: return probe.tree_touch(), func() -> Variant: return probe.deferred_touch(), func() -> Variant: return probe.build_offline()]:
			var t := Thread.new()
			t.start(job)
			threads.append(t)
	if frame == 6:
		var results := []
		for t in threads:
			results.append(t.wait_to_finish())
		check("thread_call", results[0] == 3, results)
		check("thread_tree_refused", results[1] == 0, results)
		thread_results = results
		check("python_held_refcounted", probe.kept_value() == 2, probe.kept_value())
		check("thread_offline_objects", results[3] == 1 + 3 + 5, results)
		check("input_virtual", Array(probe.history()).has("input InputEventAction jump"), probe.history())
		var counts: Dictionary = probe.frame_counts()
		check("process_runs", counts["process"] >= 4 and counts["physics"] >= 1, counts)
		check("exception_keeps_running", faulty.get_frames() >= 4, faulty.get_frames())
	if frame == 8:
		# The threads finished at frame 6; their deferred calls ran at the end of that frame.
		check("thread_deferred", thread_results[2] == true and probe.name == "RenamedLater", [thread_results[2], probe.name])
		stage.remove_child(probe)
		check("exit_tree", Array(probe.history()).back() == "exit_tree", probe.history())
		stage.add_child(probe)
		quit(0)
	return false
