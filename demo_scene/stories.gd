extends RefCounted
## The source's stories, checked on the demo's own timeline (the JSON lines it printed).
## Each holds whatever LLM tier occurred: they depend only on memory, utility and the signals' rules.

const STONE_FORGET_LIMIT := 10.5  # "a stone is forgotten within about 10 s"


static func check(timeline: Array[Dictionary]) -> Dictionary:
	return {"thief": _thief(timeline), "stone": _stone(timeline), "grenade": _grenade(timeline)}


static func _first(timeline: Array[Dictionary], fields: Dictionary, after := -INF) -> Dictionary:
	for line in timeline:
		if line.t < after:
			continue
		var matches := true
		for key: String in fields:
			if line.get(key) != fields[key]:
				matches = false
				break
		if matches:
			return line
	return {}


static func _thief(timeline: Array[Dictionary]) -> Dictionary:
	var emerge := _first(timeline, {"event": "emerge"})
	if emerge.is_empty():
		return {"held": false, "detail": "the thief never came out of hiding"}
	var recall := _first(timeline, {"event": "recall", "guard": "Aldric", "entity": "Tam"}, emerge.t)
	if recall.is_empty():
		return {"held": false, "detail": "Aldric never spotted Tam again"}
	var behaviors := {}
	for line in timeline:
		if line.t >= recall.t and line.get("event") == "sample" and line.guard == "Aldric":
			behaviors[line.behavior] = true
	var held: bool = recall.type == "hostile" and recall.R > 0.3 and not behaviors.has("greet") \
		and (behaviors.has("pursue") or behaviors.has("search"))
	return {"held": held, "detail": "hidden %.1f s, then recalled as %s with R=%.3f; Aldric's behaviors since: %s"
		% [emerge.hidden_for, recall.type, recall.R, ", ".join(behaviors.keys())]}


static func _stone(timeline: Array[Dictionary]) -> Dictionary:
	var landed := _first(timeline, {"event": "stone_landed", "who": "Pip"})
	if landed.is_empty():
		return {"held": false, "detail": "no stone landed"}
	var forgotten := _first(timeline, {"event": "memory_forgotten", "guard": "Bertha", "entity": "Pip", "type": "trivia"}, landed.t)
	if forgotten.is_empty():
		return {"held": false, "detail": "Bertha never forgot Pip's stone"}
	var after: float = forgotten.t - landed.t
	return {"held": after <= STONE_FORGET_LIMIT, "detail": "Bertha forgot Pip's stone %.2f s after it landed" % after}


static func _grenade(timeline: Array[Dictionary]) -> Dictionary:
	var exploded := _first(timeline, {"event": "grenade_exploded", "who": "Grim"})
	var reaction := _first(timeline, {"event": "grenade", "guard": "Bertha"}, exploded.get("t", INF))
	if exploded.is_empty() or reaction.is_empty():
		return {"held": false, "detail": "no grenade reaction"}
	# After an abort the aborted request gets no decision signal at all: nothing from Bertha
	# until she asks again.
	var late := {}
	for line in timeline:
		if line.t < reaction.t or line.get("guard") != "Bertha":
			continue
		if line.event == "ask":
			break
		if line.event in ["decision", "fallback"]:
			late = line
			break
	var held: bool = reaction.pending and reaction.behavior == "flee" and reaction.frame == exploded.frame and late.is_empty()
	return {"held": held, "detail": "pending=%s (in flight to the model: %s), reacted '%s' in frame %d (grenade frame %d), late answer %s"
		% [reaction.pending, reaction.in_flight, reaction.behavior, reaction.frame, exploded.frame,
			"APPLIED" if not late.is_empty() else "never applied"]}
