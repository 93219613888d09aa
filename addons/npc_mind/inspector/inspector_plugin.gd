@tool
extends EditorInspectorPlugin
## Designer tools in the inspector: a UtilityConsideration shows its response curve (sampled with
## the real curve code) with a test input, and typed fields for its family's parameters instead of
## the free-form `curve_params` Dictionary; a MemoryProfile shows R over time for each memory type.

const CurvePreview := preload("res://addons/npc_mind/inspector/curve_preview.gd")
const ProfilePreview := preload("res://addons/npc_mind/inspector/profile_preview.gd")

var undo_redo: EditorUndoRedoManager


func _can_handle(object: Object) -> bool:
	return object != null and (object.is_class("UtilityConsideration") or object.is_class("MemoryProfile"))


func _parse_begin(object: Object) -> void:
	if object.is_class("MemoryProfile"):
		var preview: Control = ProfilePreview.new()
		preview.bind(object)
		add_custom_control(preview)


func _parse_property(object: Object, _type: Variant.Type, name: String, _hint: PropertyHint, _hint_string: String, _usage: int, _wide: bool) -> bool:
	if object.is_class("UtilityConsideration") and name == "curve_params":
		var preview: Control = CurvePreview.new()
		preview.undo_redo = undo_redo
		preview.bind(object)
		add_custom_control(preview)
		return true  # the typed parameter fields replace the Dictionary editor
	return false
