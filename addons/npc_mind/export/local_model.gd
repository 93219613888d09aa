@tool
extends EditorExportPlugin
## Ships the local model with an exported Linux game when its export preset asks: the export option
## `npc_mind/ship_local_model` (off by default; Project > Export > the preset's Options) copies the
## addon's `bin/llama/` folder (a self-contained llama-server and the SmolLM2-135M gguf, built by
## `scripts/package --with-model`) beside the exported binary as `llama/`, where the game's
## `npc_mind/llm/start_local_model` finds it. Without the option nothing of the model is exported.
## Opted in without the folder, the Export dialog shows the reason on the preset and the export fails
## with it (non-zero exit, nothing left behind).
## Registered by gdbridge's own editor plugin (python/gdbridge/editor.py), so no plugin needs enabling.

const OPTION := "npc_mind/ship_local_model"
const START_SETTING := "npc_mind/llm/start_local_model"
const FOLDER := "llama"
const SERVER := "llama-server"
const LOADER := "ld-linux-x86-64.so.2"
const MODEL := "models/SmolLM2-135M-Instruct.Q4_1.gguf"
const EXECUTABLE := 0b111_101_101  # rwxr-xr-x

var _shipped_to := ""
var _blocker := ""


## The addon's bin/llama/ (res://), found from this script's own place in the addon.
func source_folder() -> String:
	return get_script().resource_path.get_base_dir().get_base_dir().path_join("bin").path_join(FOLDER)


func _get_name() -> String:
	return "npc_mind_local_model"


func _supports_platform(platform: EditorExportPlatform) -> bool:
	return platform.get_os_name() == "Linux"


func _get_export_options(_platform: EditorExportPlatform) -> Array[Dictionary]:
	return [{"option": {"name": OPTION, "type": TYPE_BOOL}, "default_value": false}]


## Shown on the preset in the Export dialog (the command line does not look at it: see _refuse).
func _get_export_option_warning(_platform: EditorExportPlatform, option: String) -> String:
	if option != OPTION or not get_option(OPTION):
		return ""
	return missing_problem()


func missing_problem() -> String:
	for name in [SERVER, LOADER, MODEL]:
		var path := source_folder().path_join(name)
		if not FileAccess.file_exists(path):
			return ("npc_mind: %s is on but %s is missing; build it with scripts/package --with-model in an "
				+ "npc_mind checkout, or unzip the addon's -with-model zip") % [OPTION, ProjectSettings.globalize_path(path)]
	return ""


func _export_begin(_features: PackedStringArray, _is_debug: bool, path: String, _flags: int) -> void:
	_shipped_to = ""
	if not get_option(OPTION) or path.get_extension().to_lower() in ["pck", "zip"]:
		return  # not opted in, or a data-only export (the game's folder keeps its llama/)
	var binary := path if path.is_absolute_path() else ProjectSettings.globalize_path("res://").path_join(path)
	var problem := missing_problem()
	if not problem.is_empty():
		push_error(problem)
		_refuse(binary)
		return
	if not ProjectSettings.get_setting(START_SETTING, false):
		push_warning("npc_mind: the export ships the local model, but %s is off: the game will not start it"
			% START_SETTING)
	add_shared_object(source_folder(), PackedStringArray(), "")
	_shipped_to = binary.get_base_dir().path_join(FOLDER)


## Neither an error here nor a preset warning changes the export's exit code; a folder where the
## engine next writes the binary does (the same way as gdbridge's runtime check, python/gdbridge/editor.py).
## A file already there would have been overwritten by this export anyway. Removed when the export ends.
func _refuse(binary: String) -> void:
	if DirAccess.dir_exists_absolute(binary):
		return
	if FileAccess.file_exists(binary):
		DirAccess.remove_absolute(binary)
	if DirAccess.make_dir_recursive_absolute(binary) == OK:
		_blocker = binary


## The copy keeps the files' contents; the server and its loader must stay executable.
func _export_end() -> void:
	if not _blocker.is_empty():
		DirAccess.remove_absolute(_blocker)  # only removes an empty folder
		_blocker = ""
	if _shipped_to.is_empty():
		return
	for name in [SERVER, LOADER]:
		var path := _shipped_to.path_join(name)
		if FileAccess.file_exists(path):
			FileAccess.set_unix_permissions(path, EXECUTABLE)
	_shipped_to = ""
