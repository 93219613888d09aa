extends SceneTree
## Bad sense configuration in the real engine: a sight with no MemoryStream sibling, an empty rule
## and a rule with no group, a sense whose parent is not a Node2D, a bad emit_stimulus call. Each
## shows in the configuration warnings; at run time each is one error (the test counts them), its
## repeats are counted, and every sense keeps working on what it can.

var frame := 0
var lonely: Node
var floating: Node
var fine_memory: Node
var target: Node2D
var marks := {}


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func rule(group: String) -> Resource:
	var made: Resource = ClassDB.instantiate("SenseRule")
	made.group = group
	return made


func sight_under(parent: Node, rules: Array) -> Node:
	var sight: Node = ClassDB.instantiate("SightSense2D")
	sight.rules = rules
	parent.add_child(sight)
	return sight


func warnings(node: Node) -> PackedStringArray:
	return NpcMindDesigner.get_configuration_warnings(node)


func _initialize() -> void:
	NpcMindServer.clock = "manual"
	target = Node2D.new()
	target.name = "Target"
	target.position = Vector2(100, 0)
	target.add_to_group("people")
	root.add_child(target)
	var guard := Node2D.new()
	guard.name = "Lonely"
	root.add_child(guard)
	lonely = sight_under(guard, [null, rule(""), rule("people")])
	var holder := Node.new()
	holder.name = "NotSpatial"
	root.add_child(holder)
	holder.add_child(ClassDB.instantiate("MemoryStream"))
	floating = sight_under(holder, [rule("people")])
	var fine := Node2D.new()
	fine.name = "Fine"
	fine.position = Vector2(0, 10)
	root.add_child(fine)
	fine_memory = ClassDB.instantiate("MemoryStream")
	fine.add_child(fine_memory)
	sight_under(fine, [rule("people")])


func _process(_delta: float) -> bool:
	frame += 1
	if frame == 1:
		var found := warnings(lonely)
		check("warning: no MemoryStream sibling", Array(found).any(func(w: String) -> bool: return w.contains("No MemoryStream sibling")), found)
		check("warning: an empty rule", Array(found).any(func(w: String) -> bool: return w.contains("Rule 0 is empty")), found)
		check("warning: a rule with no group", Array(found).any(func(w: String) -> bool: return w.contains("Rule 1 has no group")), found)
		check("warning: a parent that is not a Node2D", Array(warnings(floating)).any(func(w: String) -> bool: return w.contains("must be a Node2D")), warnings(floating))
		var empty: Node = ClassDB.instantiate("SightSense2D")
		check("warning: no rules", Array(warnings(empty)).any(func(w: String) -> bool: return w.contains("No rules")), warnings(empty))
		empty.free()
		var touch: Node = ClassDB.instantiate("TouchSense2D")
		var by_class: Resource = ClassDB.instantiate("SenseRule")
		by_class.node_class = "CharacterBody2D"
		touch.rules = [by_class, ClassDB.instantiate("SenseRule")]
		var touch_warnings := warnings(touch)
		check("touch: a class alone is a rule, neither is not", not Array(touch_warnings).any(func(w: String) -> bool: return w.contains("Rule 0"))
			and Array(touch_warnings).any(func(w: String) -> bool: return w.contains("Rule 1 has neither a group nor a class")), touch_warnings)
		touch.free()
		var ears: Node = ClassDB.instantiate("HearingSense2D")
		check("hearing: no rules needed, a MemoryStream is", Array(warnings(ears)) == ["No MemoryStream sibling: add one under the same parent, or nothing is remembered."], warnings(ears))
		ears.free()
		marks["metrics"] = NpcMindServer.get_metrics()
		NpcMindServer.emit_stimulus(Vector2.ZERO, 100.0, "loud", 0.5, target)  # not a memory type: an error, nothing queued
	elif frame < 40:
		NpcMindServer.advance(0.1)  # 40 checks of each sight
	elif frame == 40:
		var metrics: Dictionary = NpcMindServer.get_metrics()
		var reported: float = metrics["mistakes/reported"] - marks["metrics"]["mistakes/reported"]
		check("four distinct mistakes reported once each", reported == 4.0, reported)
		check("their repeats are counted, not printed", metrics["mistakes/repeats"] - marks["metrics"]["mistakes/repeats"] >= 4.0 * 30,
			metrics["mistakes/repeats"] - marks["metrics"]["mistakes/repeats"])
		check("the bad stimulus queued nothing", metrics["senses/stimuli"] == marks["metrics"]["senses/stimuli"], metrics["senses/stimuli"])
		var seen: Array = lonely.get_recent_perceptions()
		check("the sight without a stream still perceives by its good rule", seen.size() >= 9 and not seen[0].recorded, seen.size())
		var kinds: Array = fine_memory.get_memories().map(func(m: Dictionary) -> int: return m.entity_id)
		check("the NPC beside it works", kinds == [target.get_instance_id()], kinds)
		for node in root.get_children():
			node.free()
		print(JSON.stringify({"done": true}))
		return true
	return false
