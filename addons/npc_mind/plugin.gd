@tool
extends EditorPlugin
## The editor parts of npc_mind: project-setting defaults, the NPC Mind debugger tab and the
## inspector previews. The node classes themselves come from the GDExtension and exist without this
## plugin; the server registers its monitors itself. Enabling writes nothing to project.godot but
## the plugin's own entry.

## Earlier builds added this autoload (an empty node now, kept so those projects load): disabling
## the plugin removes it.
const MONITORS_AUTOLOAD := "NpcMindMonitors"
const DEBUGGER_PLUGIN := preload("res://addons/npc_mind/debugger/debugger_plugin.gd")  # designer tools
const INSPECTOR_PLUGIN := preload("res://addons/npc_mind/inspector/inspector_plugin.gd")  # designer tools

var _debugger: EditorDebuggerPlugin  # designer tools: the NPC Mind debugger tab
var _inspector: EditorInspectorPlugin  # designer tools: curve and forgetting previews

## name -> [type, default, hint, hint_string]. Values equal to the default are never written to
## project.godot, and the runtime always reads them with the same default, so the plugin is optional.
## API keys are deliberately absent: they come only from the environment (NPC_MIND_API_KEY).
const SETTINGS := {
	"npc_mind/memory/clock": [TYPE_STRING, "process", PROPERTY_HINT_ENUM, "process,scaled_process,manual"],
	"npc_mind/server/update_on_thread": [TYPE_BOOL, false, PROPERTY_HINT_NONE, ""],
	"npc_mind/llm/endpoint": [TYPE_STRING, "", PROPERTY_HINT_PLACEHOLDER_TEXT, "http://127.0.0.1:8080/v1 (empty: NPC_MIND_LLM_URL)"],
	"npc_mind/llm/start_local_model": [TYPE_BOOL, false, PROPERTY_HINT_NONE, ""],
	"npc_mind/llm/local_server_path": [TYPE_STRING, "", PROPERTY_HINT_GLOBAL_FILE, ""],
	"npc_mind/llm/local_model_path": [TYPE_STRING, "", PROPERTY_HINT_FILE, "*.gguf"],
}


func _enter_tree() -> void:
	_debugger = DEBUGGER_PLUGIN.new()  # designer tools
	add_debugger_plugin(_debugger)  # designer tools
	_inspector = INSPECTOR_PLUGIN.new()  # designer tools
	_inspector.undo_redo = get_undo_redo()  # designer tools
	add_inspector_plugin(_inspector)  # designer tools
	for setting_name: String in SETTINGS:
		var spec: Array = SETTINGS[setting_name]
		if not ProjectSettings.has_setting(setting_name):
			ProjectSettings.set_setting(setting_name, spec[1])
		ProjectSettings.set_initial_value(setting_name, spec[1])
		ProjectSettings.set_as_basic(setting_name, true)
		ProjectSettings.add_property_info({
			"name": setting_name, "type": spec[0], "hint": spec[2], "hint_string": spec[3],
		})


func _exit_tree() -> void:
	remove_debugger_plugin(_debugger)  # designer tools
	remove_inspector_plugin(_inspector)  # designer tools


func _disable_plugin() -> void:
	if ProjectSettings.has_setting("autoload/" + MONITORS_AUTOLOAD):
		remove_autoload_singleton(MONITORS_AUTOLOAD)
