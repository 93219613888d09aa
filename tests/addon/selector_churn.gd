extends SceneTree
## 2,000 UtilitySelector nodes spawned and freed while one lives: the server's selector registries
## come back to the live count (one group, one selector, 16 rows), and the survivor still chooses.

var definition: Array


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func guard() -> Node:
	var selector: Node = ClassDB.instantiate("UtilitySelector")
	selector.behaviors = definition
	return selector


func _initialize() -> void:
	NpcMindServer.clock = "manual"
	for name in ["patrol", "pursue"]:
		var consideration: Resource = ClassDB.instantiate("UtilityConsideration")
		consideration.input_key = "calm" if name == "patrol" else "threat"
		var behavior: Resource = ClassDB.instantiate("UtilityBehavior")
		behavior.name = name
		behavior.considerations = [consideration]
		definition.append(behavior)
	var keeper := guard()
	root.add_child(keeper)
	keeper.get_server_id()  # registered now (entering the tree from _initialize comes later)
	for i in 2000:
		var passer := guard()
		passer.get_server_id()
		passer.free()
	var metrics: Dictionary = NpcMindServer.get_metrics()
	var sizes := [metrics["selectors/groups"], metrics["selectors/count"], metrics["selectors/rows"]]
	check("registries back to the live count", sizes == [1.0, 1.0, 16.0], sizes)
	var id: int = keeper.get_server_id()
	NpcMindServer.set_inputs(PackedInt32Array([id]), &"threat", PackedFloat32Array([1.0]))
	NpcMindServer.advance(0.1)
	check("the survivor still chooses", NpcMindServer.get_choices(PackedInt32Array([id]))[0] == 1)
	keeper.free()
	metrics = NpcMindServer.get_metrics()
	check("the group goes with its last selector", metrics["selectors/groups"] == 0.0 and metrics["selectors/rows"] == 0.0)
	print(JSON.stringify({"done": true}))
	quit(0)
