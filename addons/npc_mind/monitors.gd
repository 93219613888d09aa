extends Node
## Adds npc_mind's decision metrics and pool statistics to the debugger's Monitors tab.
## Each monitor reads one number the server already keeps: no per-NPC work.


func _ready() -> void:
	if not Engine.has_singleton("NpcMindServer"):
		return
	var server: Object = Engine.get_singleton("NpcMindServer")
	for monitor_name: String in server.get_monitor_names():
		var id := "npc_mind/" + monitor_name
		if not Performance.has_custom_monitor(id):
			Performance.add_custom_monitor(id, server.get_monitor.bind(monitor_name))


func _exit_tree() -> void:
	if not Engine.has_singleton("NpcMindServer"):
		return
	for monitor_name: String in Engine.get_singleton("NpcMindServer").get_monitor_names():
		var id := "npc_mind/" + monitor_name
		if Performance.has_custom_monitor(id):
			Performance.remove_custom_monitor(id)
