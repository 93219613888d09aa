@tool
extends Node
## Takes the README's designer-tools screenshots in the real editor (rendered frames; no --headless):
##   xvfb-run -a -s "-screen 0 1600x900x24 -nolisten tcp" .deps/godot/godot --path . \
##     --rendering-driver opengl3 --audio-driver Dummy --resolution 1600x900 \
##     -e res://docs/media/shots/designer_shots.tscn -- --npc-mind-shot=curve --npc-mind-shot-out=/abs/out.png
## Shots: `help` (the editor's help page of UtilityConsideration), `curve` (the inspector on the demo
## guard's "search" consideration), `profile` (the inspector on the guard's MemoryProfile), `debugger` (starts the demo with --remote-debug to this editor, opens
## the NPC Mind tab, selects Bertha), `senses` (the same with the senses and actions game of
## tests/addon/debug_feed_senses.gd kept running, Aldric selected: his perceptions and actions).
## Opened without those arguments it does nothing. With NPC_MIND_LLM_URL set, the game asks that
## model. The editor may rewrite project.godot's comments on the way: restore it afterwards.

const MindPanel := preload("res://addons/npc_mind/debugger/mind_panel.gd")

var shot := ""
var out := ""
var _game := 0  ## the game's process id (the debugger shot)
var _crop: Control  ## what the debugger shot keeps: the debugger's tabs


func _ready() -> void:
	if not Engine.is_editor_hint():
		return
	for argument in OS.get_cmdline_user_args():
		if argument.begins_with("--npc-mind-shot="):
			shot = argument.trim_prefix("--npc-mind-shot=")
		elif argument.begins_with("--npc-mind-shot-out="):
			out = argument.trim_prefix("--npc-mind-shot-out=")
	if shot == "" or out == "" or Engine.has_meta("npc_mind_shot"):
		return  # nothing asked, or another copy of this scene (an editor reopening it) took it
	Engine.set_meta("npc_mind_shot", true)
	await frames(30)
	match shot:
		"curve":
			await inspect_guard_consideration()
			save(EditorInterface.get_inspector().get_parent_control())
		"profile":
			EditorInterface.inspect_object(load("res://demo_scene/mind/guard_profile.tres"))
			await frames(20)
			save(EditorInterface.get_inspector().get_parent_control())
		"help":
			EditorInterface.set_main_screen_editor("Script")
			EditorInterface.get_script_editor().goto_help("class_name:UtilityConsideration")
			await frames(30)
			save(EditorInterface.get_script_editor())
		"debugger":
			await show_debugger([], "Bertha", 52.0)
			save(_crop)
		"senses":
			await show_debugger(["-s", "res://tests/addon/debug_feed_senses.gd", "--", "--keep-running"], "Aldric", 6.0, 720)
			save(_crop)
	if _game > 0:
		OS.kill(_game)
	editor_tree().quit()


## The editor's own tree: this node may leave the tree while the editor (re)opens scenes.
func editor_tree() -> SceneTree:
	return EditorInterface.get_base_control().get_tree()


func frames(count: int) -> void:
	for _frame in count:
		await editor_tree().process_frame


func inspect_guard_consideration() -> void:
	var guard: Node = load("res://demo_scene/guard.tscn").instantiate()
	var selector: Node = guard.get_node("Selector")
	var consideration: Resource = selector.behaviors[1].considerations[0]  # search: a bell on threat
	EditorInterface.inspect_object(consideration)
	await frames(10)
	for preview in find(EditorInterface.get_inspector(), "res://addons/npc_mind/inspector/curve_preview.gd"):
		preview.test_input = 0.6
		preview.refresh(true)
	await frames(10)
	guard.free()


func show_debugger(game_args: Array, npc_name: String, until: float, height := 560) -> void:
	# The game connects to the editor's debugger from the command line (`--remote-debug`), as a
	# game started from a terminal does: the editor's own Run would start the engine's executable,
	# which here is the provisioned engine's loader.
	await editor_tree().create_timer(5.0).timeout  # the editor finishes loading (plugins, scenes)
	keep_debug_server_open()
	await frames(10)
	var settings := EditorInterface.get_editor_settings()
	var port: int = settings.get_setting("network/debug/remote_port")
	_game = OS.create_process(ProjectSettings.globalize_path("res://.deps/godot/godot"), [
		"--path", ProjectSettings.globalize_path("res://"), "--remote-debug", "tcp://127.0.0.1:%d" % port,
		"--rendering-driver", "opengl3", "--audio-driver", "Dummy", "--resolution", "960x540"] + game_args)
	var panel: Control = null
	var give_up := Time.get_ticks_msec() + 90000  # wall time: the editor may still be loading
	while panel == null and Time.get_ticks_msec() < give_up:
		await frames(1)
		var found := find(EditorInterface.get_base_control(), "res://addons/npc_mind/debugger/mind_panel.gd")
		if not found.is_empty() and found[0]._ids.size() > 0:
			panel = found[0]
	if panel == null:
		printerr("designer_shots: the NPC Mind panel got no NPC list")
		return
	reveal(panel)
	# Bertha (the demo): by t = 52 s she has seen a stone land and a grenade; her LLM requests (no
	# model configured here, so tier 3) are on the timeline.
	panel.select(panel._ids[panel._names.find(npc_name)])
	var waited_until := Time.get_ticks_msec() + 120000
	while float(panel._snapshot.get("now", 0.0)) < until and Time.get_ticks_msec() < waited_until:
		await frames(1)
	panel.custom_minimum_size.y = height  # a taller bottom panel: the whole tab in the picture
	reveal(panel)
	await frames(10)
	_crop = panel.get_parent_control()


## Debug > Keep Debug Server Open, as a designer would pick it: the editor listens for games.
func keep_debug_server_open() -> void:
	for popup in find_popups(EditorInterface.get_base_control()):
		for index in popup.item_count:
			if popup.get_item_text(index).begins_with("Keep Debug Server Open") and not popup.is_item_checked(index):
				popup.id_pressed.emit(popup.get_item_id(index))


func find_popups(node: Node) -> Array:
	var found := []
	if node is PopupMenu:
		found.append(node)
	for child in node.get_children(true):
		found.append_array(find_popups(child))
	return found


## Shows the tab that holds `control`: every TabContainer above it switches to it, and the bottom
## panel's Debugger button is pressed.
func reveal(control: Control) -> void:
	var child: Node = control
	var parent := control.get_parent()
	while parent != null:
		if parent is TabContainer:
			parent.current_tab = child.get_index()
		child = parent
		parent = parent.get_parent()
	for button in find_buttons(EditorInterface.get_base_control(), "Debugger"):
		if button.toggle_mode and not button.button_pressed:
			button.button_pressed = true


func save(region: Control) -> void:
	var image := EditorInterface.get_base_control().get_viewport().get_texture().get_image()
	if region != null:
		var rect := Rect2i(region.get_global_rect())
		image = image.get_region(rect)
	image.save_png(out)
	print("designer_shots: saved ", out, " ", image.get_size())


func find(node: Node, script_path: String) -> Array:
	var found := []
	var script: Script = node.get_script()
	if script != null and script.resource_path == script_path:
		found.append(node)
	for child in node.get_children():
		found.append_array(find(child, script_path))
	return found


func find_buttons(node: Node, text: String) -> Array:
	var found := []
	if node is Button and node.text.begins_with(text):
		found.append(node)
	for child in node.get_children():
		found.append_array(find_buttons(child, text))
	return found
