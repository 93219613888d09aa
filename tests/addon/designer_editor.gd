@tool
extends Node
## Opened in the real (headless) editor by tests/test_designer_tools.py: the npc_mind plugin is
## enabled, its NPC Mind debugger plugin and inspector plugin are in, and inspecting a
## UtilityConsideration of every curve family shows the curve preview (sampled, with typed fields)
## in place of the `curve_params` Dictionary; a MemoryProfile shows its forgetting preview.
## One JSON line per check, then the editor quits.

const CurvePreview := preload("res://addons/npc_mind/inspector/curve_preview.gd")
const ProfilePreview := preload("res://addons/npc_mind/inspector/profile_preview.gd")


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func _ready() -> void:
	if not Engine.is_editor_hint():
		return
	for _frame in 10:
		await get_tree().process_frame
	check("plugin enabled", EditorInterface.is_plugin_enabled("npc_mind"))
	var inspector := EditorInterface.get_inspector()
	for family in NpcMindDesigner.get_curve_types():
		var consideration: Resource = ClassDB.instantiate("UtilityConsideration")
		consideration.input_key = &"threat"
		consideration.curve_type = family
		EditorInterface.inspect_object(consideration)
		for _frame in 3:
			await get_tree().process_frame
		var previews := find(inspector, CurvePreview)
		var sampled: bool = previews.size() == 1 and previews[0].scores.size() == previews[0].SAMPLES
		check("%s: curve preview in the inspector" % family, sampled, previews.size())
		var raw_editors := find_property_editors(inspector, "curve_params")
		check("%s: no free-form curve_params editor" % family, raw_editors.is_empty(), raw_editors.size())
		if sampled:
			var fields: Array = previews[0].param_fields.keys()
			check("%s: typed fields" % family, fields.size() == NpcMindDesigner.get_curve_parameters(family).size(), fields)
	var profile: Resource = ClassDB.instantiate("MemoryProfile")
	EditorInterface.inspect_object(profile)
	for _frame in 3:
		await get_tree().process_frame
	var profiles := find(inspector, ProfilePreview)
	check("profile preview in the inspector", profiles.size() == 1 and profiles[0].result.get("r", []).size() == 5, profiles.size())
	EditorInterface.inspect_object(null)
	print(JSON.stringify({"done": true}))
	get_tree().quit()


func find(node: Node, script: Script) -> Array:
	var found := []
	if node.get_script() == script:
		found.append(node)
	for child in node.get_children():
		found.append_array(find(child, script))
	return found


func find_property_editors(node: Node, property: String) -> Array:
	var found := []
	if node is EditorProperty and node.get_edited_property() == property:
		found.append(node)
	for child in node.get_children():
		found.append_array(find_property_editors(child, property))
	return found
