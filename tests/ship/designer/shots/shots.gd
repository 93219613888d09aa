@tool
extends EditorPlugin
## The designer walkthrough's editor screenshots, in the real editor (rendered, under a virtual X
## server): the level open, the guard's SightSense3D selected (the Scene dock and the inspector),
## then its "chase" UtilityBehavior inspected with its on_enter actions unfolded. Runs only with
## `-- --walkthrough-shots=DIR` (the PNGs go there), then quits the editor.

var out := ""


func _enter_tree() -> void:
	for argument in OS.get_cmdline_user_args():
		if argument.begins_with("--walkthrough-shots="):
			out = argument.trim_prefix("--walkthrough-shots=")
	if out != "":
		_take.call_deferred()


func frames(count: int) -> void:
	for _frame in count:
		await get_tree().process_frame


func _take() -> void:
	OS.low_processor_usage_mode = false  # the editor draws every frame: each shot gets its frame
	await get_tree().create_timer(4.0).timeout  # the editor finishes loading
	EditorInterface.open_scene_from_path("res://level.tscn")
	await frames(30)
	widen_inspector(560)
	var level := EditorInterface.get_edited_scene_root()
	var sight := level.get_node("Guard/Sight")
	var selection := EditorInterface.get_selection()
	selection.clear()
	selection.add_node(sight)
	EditorInterface.edit_node(sight)
	await frames(20)
	await unfold(["rules"])
	await save("editor-sight.png")
	var mind := level.get_node("Guard/Mind")
	selection.clear()
	selection.add_node(mind)
	EditorInterface.edit_node(mind)
	await frames(30)
	await save("editor-mind.png")
	EditorInterface.inspect_object(mind.behaviors[0], "", true)
	await frames(20)
	await unfold(["on_enter"])
	await save("editor-behavior.png")
	get_tree().quit()


## Unfolds the inspector's array editors of these properties (as a click on "Array[...] (size n)").
func unfold(names: Array) -> void:
	for editor in find_properties(EditorInterface.get_inspector(), names):
		for button in find_buttons(editor):
			if button.toggle_mode and not button.button_pressed:
				button.button_pressed = true
				button.pressed.emit()
	await frames(30)


## Makes the inspector dock at least `width` pixels wide (as dragging its edge would).
func widen_inspector(width: int) -> void:
	var dock := EditorInterface.get_inspector().get_parent_control()
	dock.custom_minimum_size.x = width


func save(name: String) -> void:
	await RenderingServer.frame_post_draw
	var image := EditorInterface.get_base_control().get_viewport().get_texture().get_image()
	image.save_png(out.path_join(name))
	print("walkthrough shots: saved ", out.path_join(name), " ", image.get_size())


func find_properties(node: Node, names: Array) -> Array:
	var found := []
	if node is EditorProperty and String(node.get_edited_property()) in names:
		found.append(node)
	for child in node.get_children():
		found.append_array(find_properties(child, names))
	return found


func find_buttons(node: Node) -> Array:
	var found := []
	for child in node.get_children():
		if child is Button:
			found.append(child)
		found.append_array(find_buttons(child))
	return found
