@tool
extends EditorDebuggerPlugin
## The "NPC Mind" tab of the editor's debugger: one panel per debugger session, fed by the running
## game's npc_mind debug feed (sent only while a session is attached; see debug_feed.py). Works for
## games run from the editor and for `godot --remote-debug tcp://127.0.0.1:6007` from a terminal.

const MindPanel := preload("res://addons/npc_mind/debugger/mind_panel.gd")
const CAPTURE := "npc_mind"

var _panels := {}  # session id -> panel


func _has_capture(capture: String) -> bool:
	return capture == CAPTURE


func _capture(message: String, data: Array, session_id: int) -> bool:
	var panel: Object = _panels.get(session_id)
	return panel != null and panel.receive(message, data)


func _setup_session(session_id: int) -> void:
	var session: EditorDebuggerSession = get_session(session_id)
	var panel: Control = MindPanel.new()
	panel.name = "NPC Mind"
	panel.select_requested.connect(_on_select_requested.bind(session_id))
	panel.forget_freed_requested.connect(_on_forget_freed_requested.bind(session_id))
	session.started.connect(panel.on_started)
	session.stopped.connect(panel.on_stopped)
	session.add_session_tab(panel)
	_panels[session_id] = panel


func _on_select_requested(npc_id: int, session_id: int) -> void:
	var session: EditorDebuggerSession = get_session(session_id)
	if session != null and session.is_active():
		session.send_message(CAPTURE + ":select", [npc_id])
	select_in_remote_tree(npc_id)


func _on_forget_freed_requested(session_id: int) -> void:
	var session: EditorDebuggerSession = get_session(session_id)
	if session != null and session.is_active():
		session.send_message(CAPTURE + ":forget_freed", [])


## Selects the NPC in the Scene dock's Remote tree (which inspects it) when that tree lists it: the
## tree is filled while the Remote view is open, so with the Local view showing nothing happens.
static func select_in_remote_tree(npc_id: int) -> bool:
	var tree := _remote_tree(EditorInterface.get_base_control())
	if tree == null or tree.get_root() == null:
		return false
	var item := _item_for(tree.get_root(), npc_id)
	if item == null:
		return false
	var parent := item.get_parent()
	while parent != null:
		parent.collapsed = false
		parent = parent.get_parent()
	tree.set_selected(item, 0)
	tree.scroll_to_item(item)
	return true


static func _remote_tree(node: Node) -> Tree:
	if node.get_class() == "EditorDebuggerTree":
		return node as Tree
	for child in node.get_children():
		var found := _remote_tree(child)
		if found != null:
			return found
	return null


static func _item_for(item: TreeItem, npc_id: int) -> TreeItem:
	var meta: Variant = item.get_metadata(0)
	if typeof(meta) == TYPE_INT and meta == npc_id:
		return item
	var child := item.get_first_child()
	while child != null:
		var found := _item_for(child, npc_id)
		if found != null:
			return found
		child = child.get_next()
	return null
