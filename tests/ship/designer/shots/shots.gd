@tool
extends EditorPlugin
## The designer walkthrough's editor screenshots, in the real editor (rendered, under a virtual X
## server): the level open, the guard's SightSense3D selected (the Scene dock and the inspector),
## then its "chase" UtilityBehavior inspected with its on_enter actions unfolded. Runs only with
## `-- --walkthrough-shots=DIR` (the PNGs go there), then quits the editor.
## With `-- --walkthrough-edit` it makes the Done-when edit instead, through the editor's undo
## history as the Scene dock and the inspector make it: Duplicate the guard (Guard2), Make Unique
## its MemoryProfile and raise Stability Hostile to 30 s (it forgets ten times slower), save.

var out := ""
var edit := false


func _enter_tree() -> void:
	for argument in OS.get_cmdline_user_args():
		if argument.begins_with("--walkthrough-shots="):
			out = argument.trim_prefix("--walkthrough-shots=")
		elif argument == "--walkthrough-edit":
			edit = true
	if out != "":
		_take.call_deferred()
	elif edit:
		_make_the_edit.call_deferred()


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


func _make_the_edit() -> void:
	await get_tree().create_timer(2.0).timeout  # the editor finishes loading
	EditorInterface.open_scene_from_path("res://level.tscn")
	await frames(10)
	var level := EditorInterface.get_edited_scene_root()
	var guard := level.get_node("Guard")
	var undo := get_undo_redo()
	# Scene dock > Duplicate: a copy beside the original, every node of it owned by the scene
	var copy: Node3D = guard.duplicate()
	copy.name = "Guard2"
	undo.create_action("Duplicate Guard")
	undo.add_do_method(level, "add_child", copy, true)
	undo.add_do_method(self, "_own", copy, level)
	undo.add_do_property(copy, "position", Vector3(-3, 0, 1))
	undo.add_do_reference(copy)
	undo.add_undo_method(level, "remove_child", copy)
	undo.commit_action()
	# Inspector > Memory > Profile > Make Unique, then Stability Hostile
	var memory := copy.get_node("Memory")
	var shared: Resource = memory.profile
	var unique: Resource = shared.duplicate()
	undo.create_action("Make Unique")
	undo.add_do_property(memory, "profile", unique)
	undo.add_undo_property(memory, "profile", shared)
	undo.commit_action()
	undo.create_action("Set Stability Hostile")
	undo.add_do_property(unique, "stability_hostile", 30.0)
	undo.add_undo_property(unique, "stability_hostile", unique.stability_hostile)
	undo.add_do_property(unique, "resource_name", "slow to forget")
	undo.add_undo_property(unique, "resource_name", unique.resource_name)
	undo.commit_action()
	EditorInterface.save_scene()
	print("walkthrough edit: saved ", level.scene_file_path, " with ", copy.name)
	get_tree().quit()


func _own(node: Node, owner_node: Node) -> void:
	for child in node.get_children():
		child.owner = owner_node
		_own(child, owner_node)
	node.owner = owner_node


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
