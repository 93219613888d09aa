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
