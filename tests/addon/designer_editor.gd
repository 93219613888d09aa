@tool
extends Node
## Opened in the real (headless) editor by tests/test_designer_tools.py: the npc_mind plugin is
## enabled, its NPC Mind debugger plugin and inspector plugin are in, and inspecting a
## UtilityConsideration of every curve family shows the curve preview (sampled, with typed fields)
## in place of the `curve_params` Dictionary; a MemoryProfile shows its forgetting preview.
## One JSON line per check, then the editor quits. Runs only with `-- --npc-mind-editor-checks`.

const CurvePreview := preload("res://addons/npc_mind/inspector/curve_preview.gd")
const ProfilePreview := preload("res://addons/npc_mind/inspector/profile_preview.gd")
const Build := preload("res://tests/addon/utility_builders.gd")


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func _ready() -> void:
	# Only when the test asks (an editor that merely reopens this scene runs nothing).
	if not Engine.is_editor_hint() or not OS.get_cmdline_user_args().has("--npc-mind-editor-checks"):
		return
	for _frame in 10:
		await get_tree().process_frame
	check("plugin enabled", EditorInterface.is_plugin_enabled("npc_mind"))
	var inspector := EditorInterface.get_inspector()
	for family in NpcMindDesigner.get_curve_types():
		var consideration := Build.consideration("threat", family)
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
	await check_live_warnings()
	await check_element_names()
	await check_help_pages()
	await check_labels()
	EditorInterface.inspect_object(null)
	print(JSON.stringify({"done": true}))
	get_tree().quit()


## An undoable edit (what the inspector makes) of a consideration nested in a selector's behavior
## refreshes the selector's warning at once (the Scene dock's icon), and the warning clears when the
## value is fixed.
func check_live_warnings() -> void:
	var consideration := Build.consideration("threat", "saturating")
	var selector := Build.selector([Build.behavior("attack", [consideration])])
	add_child(selector)
	var refreshed := []
	get_tree().node_configuration_warning_changed.connect(func(node: Node) -> void: refreshed.append(node))
	check("valid selector: no warning", NpcMindDesigner.get_configuration_warnings(selector).is_empty(), NpcMindDesigner.get_configuration_warnings(selector))
	EditorInterface.inspect_object(selector)
	await get_tree().process_frame
	var labels := find_labels(EditorInterface.get_inspector(), "Reads: threat")
	check("the selector shows the inputs it reads", labels.size() == 1, labels.size())
	var undo := EditorInterface.get_editor_undo_redo()
	undo.create_action("break the curve")
	undo.add_do_property(consideration, "curve_params", {"k": 0.0})
	undo.add_undo_property(consideration, "curve_params", {})
	undo.commit_action()
	await get_tree().process_frame
	var warnings: PackedStringArray = NpcMindDesigner.get_configuration_warnings(selector)
	check("a nested edit refreshes the warning", refreshed.has(selector) and warnings.size() == 1 and warnings[0].contains("k must be in"), [refreshed.size(), warnings])
	refreshed.clear()
	undo.create_action("fix the curve")
	undo.add_do_property(consideration, "curve_params", {"k": 2.0})
	undo.add_undo_property(consideration, "curve_params", {"k": 0.0})
	undo.commit_action()
	await get_tree().process_frame
	check("fixing it clears the warning", refreshed.has(selector) and NpcMindDesigner.get_configuration_warnings(selector).is_empty(), NpcMindDesigner.get_configuration_warnings(selector))
	selector.queue_free()


func find_labels(node: Node, text: String) -> Array:
	var found := []
	if node is Label and node.text.begins_with(text):
		found.append(node)
	for child in node.get_children():
		found.append_array(find_labels(child, text))
	return found


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


## A behavior's array element in the inspector is labelled with its name, a consideration's with
## its input key: the resource picker shows resource_name, kept in step with them.
func check_element_names() -> void:
	var consideration := Build.consideration("threat", "saturating")
	var behavior := Build.behavior("attack", [consideration])
	consideration.input_key = &"distance"
	check("a behavior carries its name", behavior.resource_name == "attack", behavior.resource_name)
	check("a consideration carries its input key", consideration.resource_name == "distance", consideration.resource_name)
	# the picker the inspector puts on every array element and resource property
	for resource in [behavior, consideration]:
		var picker := EditorResourcePicker.new()
		add_child(picker)
		picker.edited_resource = resource
		await get_tree().process_frame
		var shown := []
		for button in picker.get_children():
			if button is Button and not button.text.is_empty():
				shown.append(button.text)
		check("the picker shows %s's name" % resource.get_class(), shown.has(resource.resource_name), shown)
		picker.queue_free()


## The help pages of the addon's classes, rendered by the editor from gdbridge's class reference:
## no raw Markdown backticks and no paragraph broken where its docstring line was wrapped.
const HELP_HEADINGS := ["Description", "Properties", "Methods", "Signals", "Constants", "Enumerations", "Property Descriptions", "Method Descriptions", "Signal Descriptions"]


func check_help_pages() -> void:
	var script_editor := EditorInterface.get_script_editor()
	for name in ["UtilitySelector", "UtilityBehavior", "UtilityConsideration", "MemoryProfile", "MemoryStream", "AsyncLLMDecision", "NpcMindServer", "NpcMindDesigner",
			"InputSource", "AwarenessInput", "RecallInput", "DistanceInput", "SinceSeenInput", "PropertyInput", "BlackboardInput", "IntentInput",
			"SenseRule", "SightSense2D", "SightSense3D", "HearingSense2D", "HearingSense3D", "TouchSense2D", "TouchSense3D", "Stimulus2D", "Stimulus3D",
			"MindAction", "MoveAction", "SetPropertyAction", "CallMethodAction", "PlayAnimationAction", "EmitSignalAction", "AskDecisionAction", "AbortDecisionAction"]:
		script_editor.goto_help("class_name:" + name)
		for _frame in 5:
			await get_tree().process_frame
		var text := ""
		for help in find_class(script_editor, "EditorHelp"):
			if help.is_visible_in_tree():
				for label in find_class(help, "RichTextLabel"):
					text += label.get_parsed_text()
		var broken := []
		var lines := Array(text.split("\n", false)).map(func(line: String) -> String: return line.strip_edges())
		for i in range(1, lines.size()):
			var before: String = lines[i - 1]
			var after: String = lines[i]
			# a paragraph ending in a word, a comma or code and the next going on in lower case:
			# one sentence broken where its docstring line was wrapped
			if not before in HELP_HEADINGS and not before.begins_with("●") and not before.is_empty() and not after.is_empty() and (before[-1] in ",`" or (before[-1] >= "a" and before[-1] <= "z")) and after[0] >= "a" and after[0] <= "z":
				broken.append(before + " | " + after)
		if OS.get_cmdline_user_args().has("--print-help"):
			print(JSON.stringify({"help_text": text}))
		check("%s: help page rendered" % name, text.contains(name) and text.length() > 200, text.length())
		check("%s: help page has no backticks" % name, not text.contains("`"), text.count("`"))
		check("%s: help page has no mid-sentence line break" % name, broken.is_empty(), broken)
		var undocumented := Array(text.split("\n")).filter(func(line: String) -> bool: return line.contains("currently no description"))
		check("%s: every member has a description" % name, undocumented.is_empty(), undocumented.size())


func find_class(node: Node, name: String) -> Array:
	var found := []
	if node.is_class(name):
		found.append(node)
	for child in node.get_children():
		found.append_array(find_class(child, name))
	return found


## Properties whose names capitalise badly carry the plugin's labels in the inspector.
func check_labels() -> void:
	var inspector := EditorInterface.get_inspector()
	var decision: Node = ClassDB.instantiate("AsyncLLMDecision")
	var expected := {
		"rehearsal_refractory_s": [ClassDB.instantiate("MemoryProfile"), "Rehearsal Refractory (s)"],
		"tag_ttl": [decision, "Intent Lifetime (s)"],
		"max_response_kib": [decision, "Max Response (KiB)"],
	}
	for property: String in expected:
		EditorInterface.inspect_object(expected[property][0])
		for _frame in 3:
			await get_tree().process_frame
		var labels := find_property_editors(inspector, property).map(func(editor: EditorProperty) -> String: return editor.label)
		check("label of %s" % property, labels == [expected[property][1]], labels)
	EditorInterface.inspect_object(null)
	decision.free()
