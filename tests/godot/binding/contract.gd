extends SceneTree
## The binding held to what a godot-cpp class does, from typed and untyped GDScript: utilities,
## object identity and lifetime, reference counts, typed containers, notifications, bitfields,
## varargs, mixins. Driven by tests/test_binding_contract.py; one {"check": ...} line per check.

var c: Contract
var u: Variant
var kept_tally: Tally
var kept_alone: WeakRef


func check(name: String, ok: bool, got: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "got": var_to_str(got)}))


func _initialize() -> void:
	c = Contract.new()
	u = c
	root.add_child(c)
	check_utilities()
	check_objects()
	check_refcounts()
	check_containers()
	check_declarations()
	check_dynamic_properties()
	check_callables_and_virtuals()
	check_engine_virtual_results()
	check_queued_calls()
	check_parity()


func _process(_delta: float) -> bool:
	if physics_frames < 2:  # the moves are checked in the second physics frame (check_moves)
		return false
	check_notifications()  # in the running tree (nodes added in _initialize enter it later)
	check_poses()
	# Kept by Python alone since _initialize (a frame ago): freed the moment Python lets go.
	c.drop_from_module()
	check("released_a_frame_later", kept_alone.get_ref() == null, kept_alone.get_ref())
	# A tally Python stored outlives GDScript's reference (Python's reference keeps it).
	check("stored_tally_survives", c.kept_count() == 1, c.kept_count())
	c.free()
	print(JSON.stringify({"done": true}))
	quit(0)
	return false


## Poses in one crossing (in the running tree, where a transform is read): a nested, rotated and
## scaled Node2D and Node3D as their global transforms say; NaNs for a plain Node, a freed node, id 0.
func check_poses() -> void:
	var holder := Node2D.new()
	holder.rotation = 0.4
	holder.position = Vector2(10, -5)
	var flat := Node2D.new()
	flat.rotation = 0.7
	flat.scale = Vector2(2, 3)
	flat.position = Vector2(30, 40)
	holder.add_child(flat)
	var solid := Node3D.new()
	solid.rotation = Vector3(0.3, -1.1, 0.5)
	solid.scale = Vector3(2, 1, 0.5)
	solid.position = Vector3(1, 2, 3)
	var plain := Node.new()
	for made: Node in [holder, solid, plain]:
		root.add_child(made)
	var gone := Node2D.new()
	var gone_id := gone.get_instance_id()
	gone.free()
	var ids := PackedInt64Array([flat.get_instance_id(), plain.get_instance_id(), gone_id, 0, solid.get_instance_id()])
	var flat_pose := flat.global_transform
	var solid_pose := solid.global_transform
	var want_2d := [flat_pose.origin.x, flat_pose.origin.y, flat_pose.x.normalized().x, flat_pose.x.normalized().y]
	var ahead := -solid_pose.basis.z.normalized()
	var want_3d := [solid_pose.origin.x, solid_pose.origin.y, solid_pose.origin.z, ahead.x, ahead.y, ahead.z]
	var got_2d: PackedFloat64Array = c.poses_of(ids, 2)
	var got_3d: PackedFloat64Array = c.poses_of(ids, 3)
	var close := func(got: PackedFloat64Array, want: Array) -> bool:
		for i in want.size():
			if absf(got[i] - want[i]) > 1e-6:
				return false
		return true
	var nans := func(got: PackedFloat64Array, from: int, to: int) -> bool:
		for i in range(from, to):
			if not is_nan(got[i]):
				return false
		return true
	check("poses_in_one_crossing",
		close.call(got_2d, want_2d) and nans.call(got_2d, 4, 20) and close.call(got_3d.slice(24), want_3d)
		and nans.call(got_3d, 0, 24), [got_2d, got_3d])
	check("poses_refused", c.poses_refused() == ["ValueError", "ValueError", true], c.poses_refused())
	check("collector_tuned", c.collector() == [true, true], c.collector())
	for made: Node in [holder, solid, plain]:
		made.free()


var physics_frames := 0


func _physics_process(_delta: float) -> bool:
	physics_frames += 1
	if physics_frames == 2:  # in a physics frame after one, where move_and_slide moves by its delta
		check_moves()
	return false


func check_moves() -> void:
	## move_bodies: a 2D body told to go (and face) slides and turns; a 3D body told to halt keeping
	## its vertical velocity keeps it; a plain Node, a freed id and 0 are skipped; bad input refused.
	var plain := Node.new()
	var gone := Node.new()
	var gone_id := gone.get_instance_id()
	gone.free()
	var walker := CharacterBody2D.new()
	var shape := CollisionShape2D.new()
	shape.shape = CircleShape2D.new()
	walker.add_child(shape)
	var falling := CharacterBody3D.new()
	falling.velocity = Vector3(4, -3, 5)
	root.add_child(walker)
	root.add_child(falling)
	var go_face := 2 | 4
	var halt_keep := 1 | 8
	c.move_many(PackedInt64Array([walker.get_instance_id(), plain.get_instance_id(), gone_id, 0]), 2,
		PackedFloat64Array([60, 0, 1, 1, 1, 1, 1, 1]), PackedFloat64Array([0.5, 0, 0, 0]),
		PackedByteArray([go_face, go_face, go_face, go_face]))
	c.move_many(PackedInt64Array([falling.get_instance_id(), walker.get_instance_id()]), 3,
		PackedFloat64Array([0, 0, 0, 9, 9, 9]), PackedFloat64Array([0, 0]), PackedByteArray([halt_keep, 2]))
	var moved := [walker.velocity, snappedf(walker.rotation, 1e-6), walker.position.x > 0.0,
		falling.velocity, falling.position]
	check("moves_in_one_crossing",
		moved == [Vector2(60, 0), 0.5, true, Vector3(0, -3, 0), Vector3.ZERO], moved)
	check("moves_refused", c.moves_refused() == ["ValueError", "ValueError", "ValueError", true], c.moves_refused())
	walker.free()
	falling.free()
	plain.free()


func check_utilities() -> void:
	var bad: PackedStringArray = c.utilities_agree()
	check("every_utility_agrees", bad.is_empty(), bad)
	check("utility_errors_raise", c.utility_errors() == PackedStringArray(["TypeError", "TypeError", "TypeError", "TypeError", "AttributeError"]), c.utility_errors())
	var texts := []
	for i in 500:
		texts.append(c.str_of(i, Vector2i(i, 1)))
	check("str_many_times", texts[499] == "499(499, 1)" and texts.size() == 500, texts.slice(0, 3))


func check_objects() -> void:
	check("typed_null", c.object_kind(null) == "none" and u.object_kind(null) == "none", c.object_kind(null))
	check("untyped_null", c.object_kind_untyped(null) == "none")
	var loose := Node.new()  # freed below: a Node left alive is reported leaked at exit
	check("live_object", c.object_kind(c) == "valid Contract" and u.object_kind_untyped(loose) == "valid Node")
	loose.free()
	# Signals emitted in one crossing: in order, a freed object's skipped, a failed one reported.
	var pings := []
	var ping := func(value: int) -> void: pings.append(value)
	c.pinged.connect(ping)
	var failed: Array = c.emit_many()
	c.pinged.disconnect(ping)
	check("signals_emitted_in_one_crossing",
		pings == [1, 3] and failed == [[2, "its arguments do not convert to Variants"]], [pings, failed])
	# A freed object passed in is a freed wrapper, typed or untyped; memory reuse never revives it.
	var bad := []
	for i in 2000:
		var n: Object = Node.new() if i % 2 == 0 else Base.new()
		c.hold(n)
		n.free()
		var fresh: Object = Node.new() if i % 2 == 0 else Base.new()
		var kinds := [c.held_state(), c.object_kind(n), u.object_kind_untyped(n)]
		if kinds != ["freed", "freed", "freed"] or c.held_is(fresh) or c.held_valid_by_utility() != is_instance_valid(n):
			bad.append([i, kinds])
		fresh.free()
	check("freed_objects_detected", bad.is_empty(), bad.slice(0, 3))
	var node := Node.new()
	c.hold(node)
	node.free()
	check("freed_use_raises", c.held_use_error().contains("instance was freed; <Node (freed)>; False"), c.held_use_error())
	var mixed := Derived.new()
	c.hold(mixed)
	check("held_live", c.held_state() == "valid Derived" and c.held_is(mixed) and c.held_valid_by_utility())
	mixed.free()


func check_refcounts() -> void:
	var t := Tally.new()
	check("refcount_after_new", t.get_reference_count() == 1, t.get_reference_count())
	var after := []
	for i in 200:
		c.touch(t)
		u.touch_untyped(t)
		t.bump()
		after.append(t.get_reference_count())
	check("refcount_after_calls", after.count(1) == after.size() and t.count == 600, [after.slice(0, 3), t.count])
	var many := []
	for i in 2000:
		var fresh := Tally.new()
		c.touch(fresh)
		many.append(fresh.get_reference_count())
	check("refcount_many_cycles", many.count(1) == many.size(), many.slice(0, 3))
	var stored := Tally.new()
	stored.bump()
	c.store(stored)
	check("refcount_stored_by_python", stored.get_reference_count() == 2, stored.get_reference_count())
	# Made by Python and returned in an Array: counted as the same Array made in GDScript.
	var made: Array[Tally] = c.tallies()
	var same: Array[Tally] = [Tally.new(), Tally.new()]
	var counts := [made[0].get_reference_count(), made[1].get_reference_count(), same[0].get_reference_count()]
	check("refcount_made_by_python", counts[0] == counts[2] and counts[1] == counts[2] and made[1].count == 1, counts)
	# Python keeps one in a module global and deletes it: as a godot-cpp Ref<T> going out of scope,
	# the count falls at once (GDScript still holds it), or the object is freed at once (it does not).
	var released := []
	for kind in ["engine", "python", "made_by_python"]:
		var r: RefCounted = RefCounted.new() if kind == "engine" else Tally.new()
		if kind == "made_by_python":
			r = c.make_kept_in_module()
		else:
			c.keep_in_module(r)
		var both: int = r.get_reference_count()
		c.drop_from_module()
		var gdscript_only: int = r.get_reference_count()
		c.keep_in_module(r)
		var w: WeakRef = weakref(r)
		r = null
		var kept_by_python: bool = w.get_ref() != null
		c.drop_from_module()
		released.append([kind, both, gdscript_only, kept_by_python, w.get_ref() == null])
	var want := []
	for kind in ["engine", "python", "made_by_python"]:
		want.append([kind, 2, 1, true, true])
	check("released_when_python_drops", released == want, released)
	var alone := Tally.new()
	c.keep_in_module(alone)
	kept_alone = weakref(alone)


func check_string_keys() -> void:
	var wrong := []
	for i in 3000:
		var got: Dictionary = c.keyed(i) if i % 2 == 0 else u.keyed(i)
		var want := {"entity": i, "fresh-%d-ü" % i: i, "mémoire": i % 7, "name": i, "été": "valeur", "label": "entity"}
		var ok := got.size() == want.size()
		for key in got:
			var kind := TYPE_STRING_NAME if key == "name" else TYPE_STRING
			ok = ok and typeof(key) == kind and want.has(key) and typeof(got[key]) == typeof(want[key]) and got[key] == want[key]
		if not ok and wrong.size() < 3:
			wrong.append([i, got])
	check("returned_string_keys_exact", wrong.is_empty(), wrong)
	check("returned_key_address_reused", c.fresh_ids_reused() > 0, c.fresh_ids_reused())
	var wrong_in := []
	for i in 3000:
		var table := {"entity": 1, "clé-%d" % (i % 300): 2, &"name": 3, "ü": 4}
		var want := ["str:entity", "str:clé-%d" % (i % 300), "StringName:name", "str:ü"]
		var kinds: Array = c.key_kinds(table) if i % 2 == 0 else u.key_kinds(table)
		if kinds != want and wrong_in.size() < 3:
			wrong_in.append([i, kinds])
	check("argument_string_keys_exact", wrong_in.is_empty(), wrong_in)
	var wrong_text := []
	for i in 3000:
		var name: StringName = c.named(i)
		var name_u: Variant = u.named(i)
		var text: String = c.texted(i)
		var text_u: Variant = u.texted(i)
		var want_name: String = ["kept", "nom-%d-é" % i, "plain-%d" % i, "interned-%d" % i][i % 4]
		var want_text: String = ["littéral", "literal", "fresh-%d" % i, "interned-%d" % i][i % 4]
		# Untyped, a plain str result stays a String (the Variant call writes the value as it is).
		var want_kind := TYPE_STRING_NAME if i % 4 < 2 else TYPE_STRING
		if (typeof(name) != TYPE_STRING_NAME or String(name) != want_name or typeof(name_u) != want_kind or String(name_u) != want_name
				or text != want_text or typeof(text_u) != TYPE_STRING or text_u != want_text) and wrong_text.size() < 3:
			wrong_text.append([i, name, name_u, text, text_u])
	check("text_results_exact", wrong_text.is_empty(), wrong_text)
	# StringName arguments: made and dropped each round (the engine frees a name nothing holds, and
	# may give its memory to the next), repeating, fixed, not ASCII; typed, untyped and through _get.
	var wrong_names := []
	for i in 3000:
		var made := StringName("nom-%d-ü" % (i % 700 if i % 3 else i))
		var fixed := &"fixe-é"
		var got := [c.name_text(made), u.name_text(made), c.name_text(fixed)]
		var want := ["StringName:" + String(made), "StringName:" + String(made), "StringName:fixe-é"]
		if got != want and wrong_names.size() < 3:
			wrong_names.append([i, got])
	check("string_name_arguments_exact", wrong_names.is_empty(), wrong_names)
	check_strings_read_again()


## Engine Strings read as str (Dictionary keys and values), which the binding caches by the address
## of their characters: each must arrive with its own text and type, whatever was read before.
func check_strings_read_again() -> void:
	var wrong := []
	var fixed := "fixe-ü"
	var twin_text := "twin"  # the same characters as a String key, then inside a StringName key
	for i in 3000:
		var fresh := "k-%04d" % i  # made and freed each round: the next may get its memory
		var cycling := "c-%d-日本" % (i % 700)  # more texts than the cache has slots
		var twin: Variant = twin_text if i % 2 == 0 else StringName(twin_text)
		var long_key := "long-%d-" % (i % 5) + "é".repeat(80)  # longer than the cache keeps
		var table := {fresh: "v-%04d" % i, fixed: i, cycling: "", "": "🎯", 7: fresh, &"nom": 1.5, "ключ": &"sn", twin: i,
			long_key: true}
		var want := ["str:%s=str:v-%04d" % [fresh, i], "str:fixe-ü=int:%d" % i, "str:%s=str:" % cycling, "str:=str:🎯",
			"int:7=str:" + fresh, "StringName:nom=float:1.5", "str:ключ=StringName:sn",
			("str:" if i % 2 == 0 else "StringName:") + "twin=int:%d" % i, "str:%s=bool:True" % long_key]
		var got: Array = c.item_kinds(table) if i % 3 else u.item_kinds(table)
		if got != want and wrong.size() < 3:
			wrong.append([i, got])
	check("argument_keys_read_again_exact", wrong.is_empty(), wrong)
	# A key String changed after it was read: grown (`+=`, which may reuse its memory) and written in
	# place (`[0] =`); the strs read before keep their text, the ones read after have the new one.
	var grown := "grow"
	var changed := "mutable"
	var want_kept := []
	for i in 50:
		c.keep_keys({grown: i, changed: i})
		want_kept.append_array(["str:" + grown, "str:" + changed])
		grown += "x"
		changed[i % changed.length()] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[i % 26]
	var kept: Array = c.kept_keys()
	check("changed_key_strings_read_again", kept == want_kept, [kept.slice(0, 6), want_kept.slice(0, 6)])


func check_containers() -> void:
	check_string_keys()
	var grid: Dictionary = c.grid()
	check("vector_keys_from_python", grid[Vector2i(2, 1)] == 21 and grid.size() == 9 and typeof(grid.keys()[0]) == TYPE_VECTOR2I, grid)
	var into := {Vector2i(2, 1): 5, Vector2(0.5, 1): 6, Color(1, 0, 0, 1): 7}
	check("vector_keys_into_python", c.grid_lookup(into) == 18 and u.grid_lookup(into) == 18)
	check("value_types_hashable", c.hashing())
	var typed: Array[Tally] = c.tallies()
	var untyped: Variant = u.tallies()
	check("typed_array_result", typed.get_typed_class_name() == &"Tally" and untyped.is_typed() and untyped.get_typed_builtin() == TYPE_OBJECT, [typed, untyped])
	var ints: Array[int] = c.ints()
	check("typed_int_array_result", ints == [1, 2, 3] and ints.get_typed_builtin() == TYPE_INT and u.ints().get_typed_builtin() == TYPE_INT)
	var names: Array[String] = ["a", "b"]
	check("typed_array_argument", c.count_names(names) == 2 and u.count_names(names) == 2)
	var scores: Dictionary[String, int] = c.scores()
	check("typed_dict_result", scores == {"a": 1, "b": 2} and scores.is_typed() and scores.get_typed_key_builtin() == TYPE_STRING and scores.get_typed_value_builtin() == TYPE_INT and u.scores().is_typed())
	check("typed_dict_argument", c.score_sum(scores) == 3 and u.score_sum({"x": 4}) == 4)
	var listed: Array[Tally] = [Tally.new()]
	c.tally_list = listed
	var back: Array[Tally] = c.tally_list
	check("typed_array_property", back.size() == 1 and back.get_typed_class_name() == &"Tally")
	var table: Dictionary[String, int] = {"k": 9}
	c.score_table = table
	check("typed_dict_property", c.score_table.is_typed() and c.score_table["k"] == 9)
	var hints := {}
	for prop in ClassDB.class_get_property_list("Contract", true):
		hints[prop["name"]] = prop
	check("typed_array_property_hint", hints["tally_list"]["hint"] == PROPERTY_HINT_ARRAY_TYPE and hints["tally_list"]["hint_string"] == "Tally", hints["tally_list"])
	check("typed_dict_property_hint", hints["score_table"]["hint"] == PROPERTY_HINT_DICTIONARY_TYPE and hints["score_table"]["hint_string"] == "String;int", hints["score_table"])
	var curves: Array[FamilyCurve] = [FamilyCurve.new()]
	c.curves = curves
	var curves_back: Array[FamilyCurve] = c.curves
	check("hinted_array_property", hints["curves"]["hint"] == PROPERTY_HINT_TYPE_STRING and hints["curves"]["hint_string"] == "24/17:FamilyCurve" and curves_back.get_typed_class_name() == &"FamilyCurve", hints["curves"])
	var returns := {}
	for method in ClassDB.class_get_method_list("Contract", true):
		returns[method["name"]] = method["return"]
	check("typed_array_method_hint", returns["tallies"]["hint"] == PROPERTY_HINT_ARRAY_TYPE and returns["tallies"]["hint_string"] == "Tally", returns["tallies"])


func check_notifications() -> void:
	var d := Derived.new()
	check("postinitialize_from_gdscript", Array(d.history()) == ["base 0", "mixin 0", "derived 0"], d.history())
	root.add_child(d)
	root.remove_child(d)
	var want := ["base 0", "mixin 0", "derived 0", "base 10", "mixin 10", "derived 10", "derived 11", "mixin 11", "base 11"]
	check("notifications_chained", Array(d.history()) == want, d.history())
	d.free()
	var q := Quiet.new()
	root.add_child(q)
	check("parent_notification_inherited", Array(q.history()) == ["base 0", "base 10"], q.history())
	q.free()
	check("postinitialize_from_python", Array(c.made_from_python()) == ["base 0", "mixin 0", "derived 0"], c.made_from_python())


func check_dynamic_properties() -> void:
	var curve := FamilyCurve.new()
	var v: Variant = curve
	var names := []
	for prop in curve.get_property_list():
		names.append(prop["name"])
	check("dynamic_property_list", names.has("slope") and not names.has("exponent") and names.has("family"), names)
	curve.set("slope", 3)
	check("dynamic_get_set", curve.get("slope") == 3.0 and v.slope == 3.0 and typeof(v.slope) == TYPE_FLOAT and curve.get("family") == "linear", [curve.get("slope")])
	v.exponent = 5.0
	curve.family = "power"
	names.clear()
	for prop in curve.get_property_list():
		names.append(prop["name"])
	check("dynamic_list_follows_state", names.has("exponent") and not names.has("slope") and curve.get("exponent") == 5.0, names)
	check("property_revert", curve.property_can_revert(&"exponent") and curve.property_get_revert(&"exponent") == 2.0 and not curve.property_can_revert(&"family"), [curve.property_can_revert(&"exponent"), curve.property_get_revert(&"exponent")])
	curve.set("nothing", 1)
	check("unknown_dynamic_property", curve.get("nothing") == null)
	check("saved_dynamic_property", ResourceSaver.save(curve, "user://curve.tres") == OK and FileAccess.get_file_as_string("user://curve.tres").contains("exponent = 5.0"), FileAccess.get_file_as_string("user://curve.tres"))
	var loaded: FamilyCurve = ResourceLoader.load("user://curve.tres", "", ResourceLoader.CACHE_MODE_IGNORE)
	check("loaded_dynamic_property", loaded.family == "power" and loaded.get("exponent") == 5.0, [loaded.family, loaded.get("exponent")])
	var groups := []
	for prop in ClassDB.class_get_property_list("FamilyCurve", true):
		if prop["usage"] & (PROPERTY_USAGE_GROUP | PROPERTY_USAGE_SUBGROUP):
			groups.append([prop["name"], prop["usage"] & PROPERTY_USAGE_SUBGROUP != 0])
	check("subgroup", groups == [["Tuning", false], ["Fine", true]], groups)


func check_callables_and_virtuals() -> void:
	var facts: Array = c.callable_facts()
	check("python_callables_compare", facts.count(true) == facts.size() and facts.size() == 9, facts)
	var cb: Callable = c.python_callable()
	check("python_callable_in_gdscript", cb.get_argument_count() == 3 and cb.call(1, 2, 3) == 6 and cb.bind(3).call(1, 2) == 6, cb.get_argument_count())
	var script := GDScript.new()
	script.source_code = "extends Hittable\nfunc _on_hit(damage: int) -> int:\n\treturn damage * 3\n"
	script.reload()
	var plain := Hittable.new()
	var scripted := Hittable.new()
	scripted.set_script(script)
	check("virtual_default_body", plain.hit(2) == 3, plain.hit(2))
	check("virtual_overridden_in_gdscript", scripted.hit(2) == 6, scripted.hit(2))
	var flags := {}
	for method in ClassDB.class_get_method_list("Hittable", true):
		flags[method["name"]] = method["flags"]
	check("virtual_declared", flags.get("_on_hit", 0) & METHOD_FLAG_VIRTUAL != 0 and flags.get("_on_hit", 0) & METHOD_FLAG_VIRTUAL_REQUIRED == 0 \
		and flags.get("_describe", 0) & METHOD_FLAG_VIRTUAL_REQUIRED != 0 and plain.describe() == "no description", flags)
	plain.free()
	scripted.free()


func check_parity() -> void:
	var announcer: Callable = c.announcer()
	check("callable_to_string", str(announcer) == "the announcer" and announcer.call() == "announced", str(announcer))
	var lambda_text := str(c.python_callable())
	check("callable_to_string_default", lambda_text.begins_with("<function Contract.python_callable.<locals>.<lambda>"), lambda_text)
	var refused: String = c.abstract_from_python()
	check("abstract_from_python", refused == "Sketch is abstract (declared abstract=True): create one of its subclasses | Drawing", refused)
	check("abstract_from_gdscript", ClassDB.class_exists("Sketch") and not ClassDB.can_instantiate("Sketch") and ClassDB.can_instantiate("Drawing"))
	var hidden: RefCounted = c.internal_from_python()
	check("internal_made_by_python", hidden != null and hidden.get_class() == "Hidden" and hidden.call("answer") == 42, hidden)
	check("internal_not_exposed", ClassDB.class_exists("Hidden") and not ClassDB.can_instantiate("Hidden") and ClassDB.can_instantiate("Tally"), [ClassDB.class_exists("Hidden"), ClassDB.can_instantiate("Hidden")])
	var paths: PackedStringArray = c.library_paths()
	var listed := ConfigFile.new()
	listed.load("res://addons/npc_mind/npc_mind.gdextension")
	var wanted := ProjectSettings.globalize_path(listed.get_value("libraries", "linux.x86_64", ""))
	check("library_path", paths[0].is_absolute_path() and paths[0].get_file() == paths[1].get_file() and FileAccess.file_exists(paths[0]) and paths[0].get_file() == wanted.get_file(), [paths, wanted])


func check_engine_virtual_results() -> void:
	var mesh := PyMesh.new()
	var arrays: Array[Array] = mesh.surface_get_blend_shape_arrays(0)
	check("virtual_typed_array_result", arrays == [[1, 2], [3]] and arrays.get_typed_builtin() == TYPE_ARRAY, arrays)
	var first: Material = mesh.surface_get_material(0)
	var base := first.get_reference_count()
	for i in 1000:
		mesh.surface_get_material(0)
	var ok := is_instance_valid(first) and first.get_reference_count() == base and first == mesh.surface_get_material(0)
	check("virtual_ref_result", ok, [base, first.get_reference_count()])


func check_declarations() -> void:
	check("bitfield_registered", ClassDB.is_class_enum_bitfield("Contract", "Flags") and ClassDB.class_get_integer_constant("Contract", "LOUD") == 2)
	var hint := {}
	for prop in ClassDB.class_get_property_list("Contract", true):
		if prop["name"] == "flags":
			hint = prop
	check("bitfield_property", hint["hint"] == PROPERTY_HINT_FLAGS and hint["hint_string"] == "Near:1,Loud:2,Bright:4", hint)
	c.flags = Contract.NEAR | Contract.BRIGHT
	check("bitfield_values", c.combine(1, 2) == 3 and u.combine(Contract.LOUD, 4) == 6 and c.flags == 5 and c.flag_type() == "Flags", [c.combine(1, 2), c.flags, c.flag_type()])
	check("vararg_method", c.joined(", ", 1, "a", 2.5) == "1, a, 2.5" and u.joined("-") == "" and c.callv("joined", ["+", 1, 2]) == "1+2", c.joined(", ", 1, "a", 2.5))
	var d := Derived.new()
	check("mixin_method", d.mixin_hello() == "hello from Derived" and ClassDB.class_has_method("Derived", "mixin_hello"), d.mixin_hello())
	check("mixin_signal", ClassDB.class_has_signal("Derived", "started") and not ClassDB.class_has_signal("Base", "started"))
	d.free()
	kept_tally = null
	var stored_elsewhere := Tally.new()
	c.store(stored_elsewhere)
	stored_elsewhere.bump()
	stored_elsewhere = null  # Python's reference keeps it (checked next frame)


class NoteMaker:
	func make_notes(target: Object) -> void:
		target.note(7, 0.25)
		target.note(8, 0.5)


func _note_from_thread(target: Object) -> void:
	target.note(1, 0.5)


func check_queued_calls() -> void:
	var n := Noted.new()
	var v: Variant = n
	root.add_child(n)
	var before: int = n.queued_total()
	n.note(1, 0.5)  # no key yet: Python
	n.key(5)
	n.note(2, 1.5)  # typed: queued
	v.note(3, -2.0)  # untyped: queued
	v.note(0, 0.0)  # the bounds are inclusive
	v.note(9, 1e300)
	v.note(10, 0.5)  # out of bounds: Python
	v.note(-1, 0.5)
	v.note(4, NAN)  # not finite: Python
	v.note(4, INF)
	v.note(5, 2)  # an int for a float: queued as 2.0, as Python's float() makes it
	v.note(6, 0.75)
	var got: Array = n.notes()
	var want := [["python", 1, 0.5, true], ["queued", 5, 2, 1.5, true], ["queued", 5, 3, -2.0, true],
		["queued", 5, 0, 0.0, true], ["queued", 5, 9, 1e300, true], ["python", 10, 0.5, true],
		["python", -1, 0.5, true], ["python", 4, "nan", true], ["python", 4, "inf", true],
		["queued", 5, 5, 2.0, true], ["queued", 5, 6, 0.75, true]]
	check("queued_calls_in_call_order", got == want and n.queued_total() - before == 6, [got, n.queued_total() - before])
	var thread := Thread.new()
	thread.start(_note_from_thread.bind(n))
	thread.wait_to_finish()
	n.note(2, 0.5)
	got = n.notes()
	check("queued_calls_only_on_main_thread", got == [["python", 1, 0.5, false], ["queued", 5, 2, 0.5, true]], got)
	# Python sees the calls a script made the moment its engine call returns (method or Callable).
	var maker := NoteMaker.new()
	var seen := [n.notes_after(maker, "method"), n.notes_after(maker, "callable")]
	var made := [["queued", 5, 7, 0.25, true], ["queued", 5, 8, 0.5, true]]
	check("queued_calls_seen_after_engine_calls", seen == [made, made], seen)
	check("queue_key_only_for_instances", n.key_of_plain_object().contains("TypeError"), n.key_of_plain_object())
	n.key(0)
	n.note(2, 0.5)
	check("queued_calls_stop_with_key_zero", n.notes() == [["python", 2, 0.5, true]])
	# A key goes with its object: objects made after (at reused addresses) never inherit it.
	var inherited := []
	for i in 300:
		var keyed := Noted.new()
		keyed.key(100 + i)
		keyed.free()
		var fresh := Noted.new()
		fresh.note(3, 0.5)
		fresh.free()
	for row in n.notes():
		if row[0] != "python":
			inherited.append(row)
	check("queued_key_freed_with_object", inherited.is_empty(), inherited.slice(0, 3))
	# Many calls between two hand-overs: all in order (the buffer grows).
	n.key(6)
	for i in 5000:
		n.note(i % 10, float(i))
	got = n.notes()
	var in_order := got.size() == 5000
	for i in got.size():
		in_order = in_order and got[i] == ["queued", 6, i % 10, float(i), true]
	check("queued_calls_many", in_order, got.size())
	check_answered_reads(n)
	n.free()


func _level_from_thread(target: Object) -> int:
	return target.level(1)


func check_answered_reads(n: Noted) -> void:
	var v: Variant = n
	n.key(5)
	n.notes()
	var total: int = n.answered_total()
	n.answer([[5, 1, 11], [5, 2, 22], [6, 1, 33]], [[5, 2, 99]])
	n.asked()
	# from the table (typed and untyped), else Python; each table answer logged
	var got := [n.level(1), v.level(2), n.level(3)]
	check("answered_from_the_table", got == [11, 22, 1003] and n.asked() == [[5, 1], [5, 2]]
		and n.answered_total() - total == 2, [got, n.answered_total() - total])
	# queued writes: an id written answers `written`, the others the table, within the budget
	n.note(4, 0.5)
	v.note(1, 0.5)
	got = [n.level(4), n.level(1), n.level(2)]
	n.note(6, 0.5)  # a third write: over the budget of 2, every read goes to Python
	got.append(n.level(2))
	check("answered_within_the_budget", got == [99, 99, 22, 1002], got)
	# a read answered as written is logged too (the next table holds its pair)
	var asked_after_writes: Array = n.asked()
	check("answered_as_written_logged", asked_after_writes == [[5, 4], [5, 1], [5, 2]], asked_after_writes)
	var thread := Thread.new()
	n.answer([[5, 1, 11]], [[5, 2, 99]])
	thread.start(_level_from_thread.bind(n))
	got = [thread.wait_to_finish(), n.level(1)]
	n.close_answers(5)
	got.append(n.level(1))
	n.answer([[5, 1, 11]], [[5, 2, -1]])
	n.note(1, 0.5)
	got.append(n.level(1))  # written, and no written answer: Python
	n.answer([[5, 1, 11]], [[5, 2, 99]])
	n.clear_answers()
	got.append(n.level(1))
	n.answer([[5, 1, 11]], [[5, 2, 99]])
	n.key(0)
	got.append(n.level(1))  # no key: Python
	check("answered_only_when_open", got == [1001, 11, 1001, 1001, 1001, 1001], got)
	# A new table keeps the old one's memory, not its answers: a pair or a key that only the table
	# before held goes to Python, also after a much larger table (the memory kept, its slots stale).
	var many := []
	for i in 200:
		many.append([5, 100 + i, i % 90])
	n.key(5)
	n.answer(many + [[5, 1, 11], [5, 2, 22], [6, 1, 66]], [[5, 2, 99], [6, 2, 99]])
	got = [n.level(1), n.level(150)]
	n.answer([[5, 3, 33]], [[5, 2, 99]])
	got += [n.level(1), n.level(2), n.level(150), n.level(3)]
	n.key(6)
	got.append(n.level(1))  # its key was in the table before only
	n.key(5)
	check("answered_only_from_the_latest_table", got == [11, 50, 1001, 1002, 1150, 33, 1001], got)
	# an apart method runs without taking the queued calls first; the next other callback takes them
	n.key(5)
	n.notes()
	n.note(1, 0.5)
	n.note(2, 0.5)
	var seen := [n.apart_notes(), v.apart_notes(), n.notes().size()]
	check("apart_methods_leave_the_queue", seen == [0, 0, 2], seen)
