extends SceneTree
## A selector's behaviors replaced at run time by others of the same names: the next change runs
## the new resources' actions, never the old ones' (the names are looked up again). Two selectors
## changing in one frame: each one's behavior_exited and behavior_entered come before any
## behavior_changed of the frame, and an action sees the signals of the changes before it already
## emitted, as when each is emitted at once. One JSON line per check.

const B = preload("res://tests/addon/utility_builders.gd")

var frame := 0
var npcs: Array[Node2D] = []
var selectors: Array[Node] = []
var heard: Array = []


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func marking(behavior_name: String, mark: String) -> Resource:
	## A behavior chosen by its own input whose on_enter sets the NPC's meta "entered" to `mark`.
	var made: Resource = B.behavior(behavior_name, [B.consideration(behavior_name)])
	made.on_enter = B.actions([B.resource("CallMethodAction", {"method": &"set_meta", "args": ["entered", mark]})])
	return made


func _initialize() -> void:
	for i in 2:
		var npc := Node2D.new()
		npc.name = "Npc%d" % i
		root.add_child(npc)
		var selector: Node = B.selector([marking("rest", "old rest"), marking("work", "old work")])
		selector.name = "Selector"
		npc.add_child(selector)
		var label := "npc%d" % i
		selector.behavior_exited.connect(func(name: StringName) -> void: heard.append([label, "exited", String(name)]))
		selector.behavior_entered.connect(func(name: StringName) -> void:
			heard.append([label, "entered", String(name), String(npc.get_meta("entered", ""))]))
		selector.behavior_changed.connect(func(name: StringName) -> void: heard.append([label, "changed", String(name)]))
		npcs.append(npc)
		selectors.append(selector)


func _process(_delta: float) -> bool:
	frame += 1
	match frame:
		1:
			for selector in selectors:
				selector.set_input(&"rest", 1.0)
				selector.set_input(&"work", 0.0)
		5:
			var renewed: Array[UtilityBehavior] = [marking("rest", "new rest"), marking("work", "new work")]
			selectors[0].behaviors = renewed
			heard.clear()
			for selector in selectors:
				selector.set_input(&"rest", 0.0)
				selector.set_input(&"work", 1.0)
		10:
			check("the redefined selector ran its new behavior's action",
				npcs[0].get_meta("entered", "") == "new work", npcs[0].get_meta("entered", ""))
			check("the other selector ran its own", npcs[1].get_meta("entered", "") == "old work",
				npcs[1].get_meta("entered", ""))
			var changed_at := heard.map(func(entry: Array) -> bool: return entry[1] == "changed").find(true)
			var before: Array = heard.slice(0, changed_at)
			check("exited and entered of both come before any behavior_changed, each entered after its action",
				changed_at >= 0 and heard.slice(changed_at).all(func(entry: Array) -> bool: return entry[1] == "changed")
				and before.has(["npc1", "entered", "work", "old work"])
				and before.filter(func(entry: Array) -> bool: return entry[1] == "entered").size() == 2
				and before.filter(func(entry: Array) -> bool: return entry[1] == "exited").size() == 2,
				heard)
			print(JSON.stringify({"done": true}))
			return true
	return false
