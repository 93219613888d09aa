@tool
extends EditorPlugin
## The editor parts of npc_mind: project-setting defaults and the runtime monitors.
## The node classes themselves come from the GDExtension and exist without this plugin.

const MONITORS_AUTOLOAD := "NpcMindMonitors"
const MONITORS_SCRIPT := "res://addons/npc_mind/monitors.gd"

## name -> [type, default, hint, hint_string]. Values equal to the default are never written to
## project.godot, and the runtime always reads them with the same default, so the plugin is optional.
## API keys are deliberately absent: they come only from the environment (NPC_MIND_API_KEY).
const SETTINGS := {
	"npc_mind/memory/clock": [TYPE_STRING, "process", PROPERTY_HINT_ENUM, "process,scaled_process,manual"],
	"npc_mind/llm/endpoint": [TYPE_STRING, "", PROPERTY_HINT_PLACEHOLDER_TEXT, "http://127.0.0.1:8080/v1 (empty: NPC_MIND_LLM_URL)"],
}


func _enter_tree() -> void:
	for setting_name: String in SETTINGS:
		var spec: Array = SETTINGS[setting_name]
		if not ProjectSettings.has_setting(setting_name):
			ProjectSettings.set_setting(setting_name, spec[1])
		ProjectSettings.set_initial_value(setting_name, spec[1])
		ProjectSettings.set_as_basic(setting_name, true)
		ProjectSettings.add_property_info({
			"name": setting_name, "type": spec[0], "hint": spec[2], "hint_string": spec[3],
		})


func _enable_plugin() -> void:
	add_autoload_singleton(MONITORS_AUTOLOAD, MONITORS_SCRIPT)


func _disable_plugin() -> void:
	remove_autoload_singleton(MONITORS_AUTOLOAD)
