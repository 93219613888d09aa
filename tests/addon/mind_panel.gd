extends SceneTree
## The NPC Mind tab's panel fed as the debugger feeds it (`receive`): NPCs listed by scene path (two
## named by the engine told apart), a freed NPC marked and its last data kept, a freed entity shown
## by its remembered name, "Drop freed" asking the game to drop them, and the senses' perceptions and
## the actions run as lines of text. One JSON line per check.

const MindPanel := preload("res://addons/npc_mind/debugger/mind_panel.gd")
const GUARD := 11
const MOB_A := 12
const MOB_B := 13
const THIEF := 21
const PLAIN := 12345


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func items(panel: Control) -> Array:
	var texts := []
	for index in panel._list.item_count:
		texts.append(panel._list.get_item_text(index))
	return texts


func snapshot(npc_id: int, now: float) -> Dictionary:
	return {"id": npc_id, "name": "@CharacterBody3D@2", "path": "Mobs/@CharacterBody3D@2", "now": now, "memory_count": 2,
		"memories": [
			{"entity": THIEF, "entity_name": "Tam", "entity_path": "", "entity_freed": true, "type": 3, "type_name": "hostile",
				"r": 0.9, "s": 30.0, "age": 1.0, "salience": 0.9, "recalls": 1, "pinned": false, "long_term": false, "awareness": 3},
			{"entity": PLAIN, "entity_name": "", "entity_path": "", "entity_freed": false, "type": 0, "type_name": "trivia",
				"r": 0.5, "s": 30.0, "age": 1.0, "salience": 0.2, "recalls": 1, "pinned": false, "long_term": false, "awareness": 0},
		],
		"profile": {"curve": "exponential", "forget": 0.05, "search": 0.3, "pursue": 0.8}}


func _initialize() -> void:
	var panel: Control = MindPanel.new()
	root.add_child(panel)
	var asked := {"select": [], "forget": 0}
	panel.select_requested.connect(func(npc_id: int) -> void: asked.select.append(npc_id))
	panel.forget_freed_requested.connect(func() -> void: asked.forget += 1)
	panel.receive("npc_mind:npcs", [PackedInt64Array([GUARD, MOB_A, MOB_B]),
		PackedStringArray(["Village/Bertha", "Mobs/@CharacterBody3D@2", "Mobs/@CharacterBody3D@3"]),
		PackedStringArray(["Bertha the guard", "@CharacterBody3D@2", "@CharacterBody3D@3"]), [false, false, true]])
	check("npcs are listed by scene path, a display name leading", items(panel) == ["Bertha the guard   Village/Bertha",
		"Mobs/@CharacterBody3D@2", "(freed) Mobs/@CharacterBody3D@3"], items(panel))
	check("drop freed is offered while an npc is freed", not panel._drop_freed.disabled and panel._status.text.contains("1 freed"), panel._status.text)
	panel._drop_freed.pressed.emit()
	check("drop freed asks the game", asked.forget == 1, asked.forget)

	panel.select(MOB_A)
	panel.receive("npc_mind:npc", [snapshot(MOB_A, 3.0)])
	check("the header names the npc by its path", panel._header.text.begins_with("Mobs/@CharacterBody3D@2   t = 3.0 s"), panel._header.text)
	var bars: Control = panel._memories
	check("a freed entity shows its remembered name, marked", bars.entity_label(bars.rows[0]) == "Tam (freed)"
		and bars.entity_label(bars.rows[1]) == str(PLAIN), [bars.entity_label(bars.rows[0]), bars.entity_label(bars.rows[1])])
	var tip: String = bars._get_tooltip(Vector2(10, 10))
	check("a memory's tooltip says the entity is freed", tip == "Tam (freed)\nentity %d\nfreed" % THIEF, tip)
	panel.receive("npc_mind:npc", [{"id": MOB_A, "name": "@CharacterBody3D@2", "path": "Mobs/@CharacterBody3D@2", "freed": true}])
	check("a freed npc keeps its last data, marked", panel._header.text == "Mobs/@CharacterBody3D@2   (freed; its last data, t = 3.0 s)"
		and bars.rows.size() == 2, [panel._header.text, bars.rows.size()])

	panel.select(GUARD)
	panel.receive("npc_mind:npc", [{"id": GUARD, "name": "Bertha the guard", "path": "Village/Bertha", "now": 4.0}])
	panel.receive("npc_mind:npcs", [PackedInt64Array([MOB_B]), PackedStringArray(["Mobs/@CharacterBody3D@3"]),
		PackedStringArray(["@CharacterBody3D@3"]), [false]])
	check("an npc dropped from the list is marked gone", panel._header.text.ends_with("(no longer in the game)"), panel._header.text)
	check("selections reach the game", asked.select == [MOB_A, GUARD], asked.select)

	var sensed := snapshot(MOB_B, 5.0)
	sensed.senses = [{"name": "Eyes", "class": "SightSense2D", "perceived": 12}, {"name": "Ears", "class": "HearingSense2D", "perceived": 0}]
	sensed.perceptions = [{"sense": "Eyes", "entity": THIEF, "entity_name": "Tam", "entity_path": "/root/Tam", "entity_freed": false,
		"type": 3, "type_name": "hostile", "count": 12, "recorded": 1, "time": 4.8, "salience": 0.9, "where": [200.0, 30.0], "age": 0.2}]
	sensed.perception_count = 3
	sensed.selector = {"names": PackedStringArray(["attack"]), "scores": [1.0], "chosen": "attack"}
	sensed.actions = [
		{"time": 1.0, "behavior": "idle", "phase": "on_tick", "index": 0, "action": "SetPropertyAction rotation", "ok": true, "times": 65},
		{"time": 1.5, "behavior": "idle", "phase": "on_exit", "index": 0, "action": "CallMethodAction no_such_method", "ok": false, "times": 1},
	]
	panel.select(MOB_B)
	panel.receive("npc_mind:npc", [sensed])
	var perceived: PackedStringArray = panel._perceptions.texts()
	check("each sense lists what it perceived in the last second", perceived == PackedStringArray([
		"Eyes  (SightSense2D)   12 perceptions",
		"    Tam · hostile   salience 0.90   x12 (1 recorded)   0.2 s ago   at (200, 30)",
		"Ears  (HearingSense2D)   nothing in the last second",
		"    (2 more not shown)"]), perceived)
	var ran: PackedStringArray = panel._actions.texts()
	check("the actions run are listed latest first with their phase and result", ran == PackedStringArray([
		"t 1.50 s   idle   exit   CallMethodAction no_such_method   skipped (see the error)",
		"t 1.00 s   idle   tick x65   SetPropertyAction rotation   ok"]), ran)
	panel.free()
	print(JSON.stringify({"done": true}))
	quit(0)
