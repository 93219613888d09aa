extends SceneTree
## Faults inside Python hooks and calls, from typed and untyped GDScript: each is reported with its
## traceback and the engine keeps running (tests/test_binding_faults.py).


func check(name: String, ok: bool, got: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "got": var_to_str(got)}))


func _initialize() -> void:
	var b := Broken.new()
	var u: Variant = b
	check("property_list_fault", b.get_property_list().size() > 0)
	check("get_fault", b.get("anything") == null)
	b.set("anything", 1)
	check("set_fault", true)
	# As for an engine method: a string is never parsed into an int, a fraction never truncated; the
	# engine reports the call error (callv, so that this script goes on).
	check("wrong_argument_type", b.callv("takes_int", ["text"]) == null)
	var refused: Array = [b.callv("takes_int", ["12"]), b.callv("takes_int", [1.5])]
	check("no_silent_coercion", refused == [null, null], refused)
	check("numbers_convert", [u.takes_int(3.0), u.takes_int(true)] == [3, 1], [u.takes_int(3.0), u.takes_int(true)])
	var n := Node.new()
	n.free()
	check("method_on_freed_argument", [b.takes_object(n), u.takes_object(n)] == [null, null], [b.takes_object(n), u.takes_object(n)])
	check("bad_result_type", [b.bad_result(), u.bad_result()] == [0, null], [b.bad_result(), u.bad_result()])
	var typed: Array[int] = b.bad_typed_list()
	check("bad_typed_list", typed.is_empty(), typed)
	var tallies: Array[Tally] = b.bad_class_list()
	check("bad_class_in_typed_list", tallies.is_empty() and tallies.get_typed_class_name() == &"Tally", tallies)
	# A list that contains itself as a result, typed, untyped, in a typed Array: refused, reported.
	var looped := [b.looped_result(), u.looped_result(), b.looped_typed_result(), b.looped_dict_result()]
	check("self_containing_result", looped == [[], null, [], {}], looped)
	check("freed_result", b.returns_freed() == null and u.returns_freed() == null)
	check("still_running", Broken.new() != null)
	check("frame_hook_added", b.add_failing_frame_hook())
	frames_left = 5
	broken = b


var frames_left := -1
var broken: Broken


func _process(_delta: float) -> bool:
	if frames_left < 0:
		return false
	frames_left -= 1
	if frames_left > 0:
		return false
	var failures: int = broken.frame_hook_failures()
	check("frame_hook_repeats_counted", failures >= 4, failures)
	print(JSON.stringify({"done": true}))
	return true
