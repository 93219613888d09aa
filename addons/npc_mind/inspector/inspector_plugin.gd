@tool
extends EditorInspectorPlugin
## Designer tools in the inspector: a UtilityConsideration shows its response curve (sampled with
## the real curve code) with a test input, and typed fields for its family's parameters instead of
## the free-form `curve_params` Dictionary; a MemoryProfile shows R over time for each memory type.

const CurvePreview := preload("res://addons/npc_mind/inspector/curve_preview.gd")
const ProfilePreview := preload("res://addons/npc_mind/inspector/profile_preview.gd")

const WARNING_CLASSES := ["UtilitySelector", "AsyncLLMDecision", "MemoryStream", "SightSense2D", "SightSense3D",
	"HearingSense2D", "HearingSense3D", "TouchSense2D", "TouchSense3D"]
## Labels for the properties whose names the inspector's capitalisation reads badly ("Tag Ttl",
## "Rehearsal Refractory S"): the property keeps its name (scenes, scripts, Python), only the label
## changes; the editor's own editor for it is kept.
const LABELS := {
	"MemoryProfile:rehearsal_refractory_s": "Rehearsal Refractory (s)",
	"AsyncLLMDecision:tag_ttl": "Intent Lifetime (s)",
	"AsyncLLMDecision:max_response_kib": "Max Response (KiB)",
	"AsyncLLMDecision:max_decoded_kib": "Max Decoded (KiB)",
}

## Set by the plugin; every undoable edit then refreshes the scene's configuration warnings.
var undo_redo: EditorUndoRedoManager:
	set(value):
		undo_redo = value
		if value != null and not value.history_changed.is_connected(refresh_warnings):
			value.history_changed.connect(refresh_warnings)  # an action was committed
			value.version_changed.connect(refresh_warnings)

var _labelling := false


func _can_handle(object: Object) -> bool:
	return object != null and (object.is_class("UtilityConsideration") or object.is_class("MemoryProfile")
		or object.is_class("UtilitySelector") or object.is_class("AsyncLLMDecision"))


func _parse_begin(object: Object) -> void:
	if object.is_class("MemoryProfile"):
		var preview: Control = ProfilePreview.new()
		preview.bind(object)
		add_custom_control(preview)
	elif object.is_class("UtilitySelector"):
		var label := Label.new()
		var keys := input_keys(object)
		var sourced := sourced_keys(object)
		label.text = "Reads: %s" % (", ".join(keys) if not keys.is_empty() else "(no inputs yet)" if sourced.is_empty() else "(nothing from the game)")
		if not sourced.is_empty():
			label.text += "\nSourced: %s" % ", ".join(sourced)
		label.tooltip_text = "The context keys this selector's behaviors read: what the game must pass to evaluate() (or set_inputs). A consideration with a default_input falls back to it. Sourced inputs are read by the selector itself, from memory, the world or its blackboard."
		label.mouse_filter = Control.MOUSE_FILTER_PASS
		label.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
		add_custom_control(label)


## The input keys a selector's behaviors read, in first-use order.
static func input_keys(selector: Object) -> PackedStringArray:
	var keys := PackedStringArray()
	for behavior: Object in selector.behaviors:
		if behavior == null:
			continue
		for consideration: Object in behavior.considerations:
			if consideration != null and consideration.source == null and String(consideration.input_key) != "" and not keys.has(String(consideration.input_key)):
				keys.append(String(consideration.input_key))
	return keys


## The keys of the considerations that read a source (their resource_name is their key).
static func sourced_keys(selector: Object) -> PackedStringArray:
	var keys := PackedStringArray()
	for behavior: Object in selector.behaviors:
		if behavior == null:
			continue
		for consideration: Object in behavior.considerations:
			if consideration != null and consideration.source != null and not keys.has(consideration.resource_name):
				keys.append(consideration.resource_name)
	return keys


## Every npc_mind node of the edited scene re-reads its configuration warnings: an edit of a nested
## resource (a behavior's consideration, a profile) would otherwise leave the Scene dock's warning
## stale until the scene is reloaded.
static func refresh_warnings() -> void:
	var root := EditorInterface.get_edited_scene_root()
	if root != null:
		_refresh_warnings(root)


static func _refresh_warnings(node: Node) -> void:
	for name in WARNING_CLASSES:
		if node.is_class(name):
			node.update_configuration_warnings()
	for child in node.get_children():
		_refresh_warnings(child)


func _parse_property(object: Object, type: Variant.Type, name: String, hint: PropertyHint, hint_string: String, usage: int, wide: bool) -> bool:
	var label: String = LABELS.get("%s:%s" % [object.get_class(), name], "")
	if not label.is_empty() and not _labelling:
		_labelling = true  # the editor's own editor asks the plugins again: this one says no then
		var editor := EditorInspector.instantiate_property_editor(object, type, name, hint, hint_string, usage, wide)
		_labelling = false
		if editor != null:
			add_property_editor(name, editor, false, label)
			return true
	if object.is_class("UtilityConsideration") and name == "curve_params":
		var preview: Control = CurvePreview.new()
		preview.undo_redo = undo_redo
		preview.bind(object)
		add_custom_control(preview)
		return true  # the typed parameter fields replace the Dictionary editor
	return false
