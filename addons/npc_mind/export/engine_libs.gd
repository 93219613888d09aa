@tool
extends EditorExportPlugin
## Linux exports made with npc_mind's provisioned engine (Debian's Godot build, patched to run on
## an older glibc) need that engine's libraries beside the game. When the editor has a
## `npc_mind_export_libs` folder beside its executable, this copies it as `lib/` next to the
## exported binary, whose loader (`lib/ld-linux-x86-64.so.2`) is found from the working directory:
## started from any other folder (a store's client, a desktop entry) it could not start at all
## (`not found`). So the binary becomes `<name>.bin` (the engine still finds `<name>.pck` beside it)
## and the export's own name, and `<name>.sh`, are a launcher that starts it from its folder,
## whatever the working directory. An official Godot has no such folder: this does nothing.
## Registered by gdbridge's own editor plugin (python/gdbridge/editor.py), so no plugin needs enabling.

const LIBS_FOLDER := "npc_mind_export_libs"
const EXECUTABLE := 0b111_101_101  # rwxr-xr-x
const LAUNCHER := """#!/bin/sh
# Starts %s with the engine libraries in lib/ beside it (written by npc_mind's export).
# The binary finds lib/ from the working directory, so it runs from its own folder;
# NPC_MIND_LAUNCH_DIR keeps the folder it was started from.
NPC_MIND_LAUNCH_DIR=$(pwd)
export NPC_MIND_LAUNCH_DIR
cd "$(dirname "$(readlink -f "$0")")" || exit 1
exec "./%s" "$@"
"""

var _binary := ""


static func libs_folder() -> String:
	return OS.get_executable_path().get_base_dir().path_join(LIBS_FOLDER)


func _get_name() -> String:
	return "npc_mind_engine_libs"


func _supports_platform(platform: EditorExportPlatform) -> bool:
	return platform.get_os_name() == "Linux"


## The engine's own console wrapper (`<name>.sh` of debug exports) runs the binary from the caller's
## folder, where its loader is not found; ours replaces it.
func _get_export_options_overrides(_platform: EditorExportPlatform) -> Dictionary:
	if not DirAccess.dir_exists_absolute(libs_folder()):
		return {}
	return {"debug/export_console_wrapper": 0}


func _export_begin(_features: PackedStringArray, _is_debug: bool, path: String, _flags: int) -> void:
	_binary = ""
	if not DirAccess.dir_exists_absolute(libs_folder()):
		return
	if path.get_extension().to_lower() in ["pck", "zip"]:
		return  # a data-only export: no binary to start
	_binary = path if path.is_absolute_path() else ProjectSettings.globalize_path("res://").path_join(path)


func _export_end() -> void:
	if _binary.is_empty() or not FileAccess.file_exists(_binary):
		_binary = ""
		return  # no binary: the export failed (e.g. its folder does not exist), so leave nothing
	var folder := _binary.get_base_dir()
	var stem := _binary.get_file().get_basename()
	var engine := engine_name(_binary.get_file())
	var failed := _copy_folder(libs_folder(), folder.path_join("lib"))
	if failed.is_empty() and DirAccess.rename_absolute(_binary, folder.path_join(engine)) != OK:
		failed = "cannot rename %s to %s" % [_binary, engine]
	for launcher in [_binary, folder.path_join(stem + ".sh")]:
		if failed.is_empty():
			failed = _write_launcher(launcher, engine)
	if not failed.is_empty():
		var message := "npc_mind: the exported game cannot start without its engine libraries: " + failed
		push_error(message)
		get_export_platform().add_message(EditorExportPlatform.EXPORT_MESSAGE_ERROR, "npc_mind", message)
	_binary = ""


## The exported binary's new name: `<name>.bin` (or `<name>.engine` when the export is itself
## named `<name>.bin`), whose basename is still the pack's, `<name>.pck`.
static func engine_name(exported: String) -> String:
	var stem := exported.get_basename()
	return stem + (".engine" if exported == stem + ".bin" else ".bin")


## Copies every file of `source` into `target` (made if missing); returns what failed, or "".
func _copy_folder(source: String, target: String) -> String:
	if DirAccess.make_dir_recursive_absolute(target) != OK:
		return "cannot make " + target
	for name in DirAccess.get_files_at(source):
		if DirAccess.copy_absolute(source.path_join(name), target.path_join(name), EXECUTABLE) != OK:
			return "cannot copy %s to %s" % [source.path_join(name), target]
	return ""


func _write_launcher(path: String, binary: String) -> String:
	var file := FileAccess.open(path, FileAccess.WRITE)
	if file == null:
		return "cannot write " + path
	file.store_string(LAUNCHER % [binary, binary])
	file.close()
	FileAccess.set_unix_permissions(path, EXECUTABLE)
	return ""
