extends SceneTree
## Drives tests/test_debugger_feed.py's lifecycle tests: a current scene "Level" holds two NPCs the
## engine names (Mobs/@CharacterBody3D@N, a MemoryStream each) that remember a thief "Tam". Once the
## feed has sent its first list, Tam is freed and the test's debugger is told (`test:thief_freed`);
## it then stops the game at a break, selects an NPC, continues, asks for that NPC to be freed
## (`test:free`), drops the freed NPCs from the list, and ends the run (`test:quit`).

const WATCHDOG_MSEC := 30000  ## a run the test never ends stops here (the test then fails)

var mobs: Array[Node] = []
var thief: Node3D
var started_msec := 0
var quitting := false


func _initialize() -> void:
	var level := Node3D.new()
	level.name = "Level"
	root.add_child(level)
	current_scene = level
	var group := Node3D.new()
	group.name = "Mobs"
	level.add_child(group)
	thief = Node3D.new()
	thief.name = "Tam"
	level.add_child(thief)
	for index in 2:
		var mob := CharacterBody3D.new()  # no name: the engine generates one
		var memory: Node = ClassDB.instantiate("MemoryStream")
		memory.name = "Memory"
		mob.add_child(memory)
		group.add_child(mob)
		memory.record_event(thief.get_instance_id(), MemoryStream.HOSTILE, 0.9)
		mobs.append(mob)
	EngineDebugger.register_message_capture("test", _on_test_message)
	print(JSON.stringify({"mobs": [mobs[0].get_instance_id(), mobs[1].get_instance_id()], "thief": thief.get_instance_id(),
		"names": [str(mobs[0].name), str(mobs[1].name)]}))
	started_msec = Time.get_ticks_msec()


func _on_test_message(message: String, _data: Array) -> bool:
	match message.trim_prefix("test:"):
		"free":
			mobs[0].free()
		"quit":
			quitting = true
	return true


func _process(_delta: float) -> bool:
	var feed := root.get_node_or_null("NpcMindDebugFeed")
	if thief != null and feed != null and feed.get_sent_count() > 0:
		thief.free()
		thief = null
		EngineDebugger.send_message("test:thief_freed", [])
	if Time.get_ticks_msec() - started_msec > WATCHDOG_MSEC:
		print(JSON.stringify({"watchdog": true}))
		quitting = true
	if quitting:
		EngineDebugger.unregister_message_capture("test")  # the engine's own unregistering at exit errs
	return quitting
