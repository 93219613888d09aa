class_name GdBench
extends Node
## The GDScript side of the binding benchmark: the same methods as bench_classes.py.


func add(a: int, b: int) -> int:
	return a + b


func take(values: PackedFloat32Array, table: Dictionary) -> int:
	return values.size() + table.size()


func context_size(context: Dictionary) -> int:
	return context.size()


func strongest() -> Dictionary:
	return {"event": "gunshot", "salience": 0.75, "age": 1.5, "slot": 3, "source": "north_gate", "confidence": 0.5}


func typed_context(context: Dictionary[String, float]) -> int:
	return context.size()


func behavior() -> StringName:
	return &"patrol"


func _get(property: StringName) -> Variant:
	return 3 if property == &"level" else null


func engine_calls(n: int) -> float:
	var started := Time.get_ticks_usec()
	for i in n:
		get_child_count()
	return float(Time.get_ticks_usec() - started) / n
