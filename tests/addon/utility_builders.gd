extends RefCounted
## Builders the addon test scripts share: a UtilityConsideration, a UtilityBehavior of some, a
## UtilitySelector of some (typed arrays, as the inspector makes them).


static func consideration(key: String, curve_type := "linear") -> Resource:
	var made: Resource = ClassDB.instantiate("UtilityConsideration")
	made.input_key = StringName(key)
	made.curve_type = curve_type
	return made


static func behavior(behavior_name: String, considerations: Array) -> Resource:
	var made: Resource = ClassDB.instantiate("UtilityBehavior")
	made.name = StringName(behavior_name)
	var typed: Array[UtilityConsideration] = []
	typed.assign(considerations)
	made.considerations = typed
	return made


static func selector(behaviors: Array) -> Node:
	var made: Node = ClassDB.instantiate("UtilitySelector")
	var typed: Array[UtilityBehavior] = []
	typed.assign(behaviors)
	made.behaviors = typed
	return made


## A resource of `kind` with these fields set (a MindAction, a SenseRule...).
static func resource(kind: String, fields: Dictionary) -> Resource:
	var made: Resource = ClassDB.instantiate(kind)
	for key: String in fields:
		made.set(key, fields[key])
	return made


## A behavior's action list (a typed Array[MindAction], as the inspector makes it).
static func actions(list: Array) -> Array[MindAction]:
	var typed: Array[MindAction] = []
	typed.assign(list)
	return typed
