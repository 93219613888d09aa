extends SceneTree
## Selectors with their own copies of the same sources (NPCs made one by one, each with new
## resources, instead of instances of one scene sharing them): copies with the same settings are
## read in one batch, and copies whose settings differ in any field (here only when_unknown) are
## not mixed up: each selector chooses from its own sources' values. One JSON line per check.

const B = preload("res://tests/addon/utility_builders.gd")

var selectors: Array[Node] = []
var frame := 0


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func blackboard(key: String, when_unknown: float) -> Resource:
	var made: Resource = ClassDB.instantiate("BlackboardInput")
	made.key = StringName(key)
	made.when_unknown = when_unknown
	return made


func sourced(consideration_key: String, source: Resource) -> Resource:
	var made: Resource = B.consideration(consideration_key)
	made.source = source
	return made


func _initialize() -> void:
	for i in 6:
		var npc := Node2D.new()
		npc.name = "Npc%d" % i
		root.add_child(npc)
		# "high" reads blackboard value a (unset: when_unknown), "low" a steady 0.5 from b
		var eager := 0.9 if i % 2 == 0 else 0.2
		var high: Resource = B.behavior("high", [sourced("a", blackboard("a", eager))])
		var low: Resource = B.behavior("low", [sourced("b", blackboard("b", 0.5))])
		var selector: Node = B.selector([high, low])
		npc.add_child(selector)
		selectors.append(selector)


func _choices() -> Array:
	return selectors.map(func(selector: Node) -> String: return String(selector.choice))


func _process(_delta: float) -> bool:
	frame += 1
	if frame == 3:
		check("each selector chooses from its own copies' settings",
			_choices() == ["high", "low", "high", "low", "high", "low"], _choices())
		selectors[1].set_blackboard_value(&"a", 1.0)  # one selector's value: the others keep theirs
	if frame == 6:
		check("a value written to one selector's blackboard moves only that one",
			_choices() == ["high", "high", "high", "low", "high", "low"], _choices())
		print(JSON.stringify({"done": true}))
		return true
	return false
