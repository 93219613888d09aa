extends Node
## The GDScript side of the binding benchmark: the same methods as bench_classes.py.


func add(a: int, b: int) -> int:
	return a + b


func take(values: PackedFloat32Array, table: Dictionary) -> int:
	return values.size() + table.size()
