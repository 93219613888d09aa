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


## Two sourced behaviors: pursue the target from memory (its awareness, vetoed below 0.9; with
## `with_distance`, the nearer the better instead) or idle by the blackboard's `calm`.
static func pursue_or_idle(with_distance := false) -> Array[UtilityBehavior]:
	var aware: Resource = ClassDB.instantiate("DistanceInput" if with_distance else "AwarenessInput")
	var pursue := resource("UtilityConsideration", {
		"source": aware, "use_input_range": true, "input_max": 1.0e6 if with_distance else 3.0,
		"invert": with_distance, "veto_below": 0.0 if with_distance else 0.9,
	})
	var calm := resource("UtilityConsideration", {"source": resource("BlackboardInput", {"key": &"calm"})})
	var made: Array[UtilityBehavior] = []
	made.assign([behavior("pursue", [pursue]), behavior("idle", [calm])])
	return made


## A UtilitySelector named "Selector" choosing from `behaviors` (the very array: selectors may share
## it), its target from memory (of `memory_types`, -1: the default), a calm of 0.2 on its blackboard.
static func memory_selector(behaviors: Array[UtilityBehavior], memory_types := -1) -> Node:
	var made: Node = ClassDB.instantiate("UtilitySelector")
	made.name = "Selector"
	made.behaviors = behaviors
	made.target_from = "memory"
	if memory_types >= 0:
		made.target_memory_types = memory_types
	made.blackboard = {"calm": 0.2}
	return made
