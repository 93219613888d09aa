extends SceneTree

func _init() -> void:
	var g = ClassDB.instantiate("Greeter")
	print(JSON.stringify({"class": g.get_class(), "count": g.count, "add": g.add(2, 3)}))
	g.count = 7
	print(JSON.stringify({"count": g.count, "greet": g.greet("bob")}))
	g.free()
	quit(0)
