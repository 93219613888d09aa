extends SceneTree
## The server's clock in the engine (run with --fixed-fps 10): `process` counts play seconds, not
## scaled by Engine.time_scale and stopped while the tree is paused; `scaled_process` follows the
## scale. Prints one JSON line per check.

var frame := 0
var marks := {}


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func _initialize() -> void:
	root.add_child(ClassDB.instantiate("MemoryStream"))  # the server ticks once a node registers
	check("default clock", NpcMindServer.clock == "process", NpcMindServer.clock)


func _process(_delta: float) -> bool:
	# A mark is taken before the server's own per-frame step (it runs after every node), so the
	# seconds between marks at frames a and b are the steps of frames a .. b - 1.
	frame += 1
	match frame:
		5:
			Engine.time_scale = 4.0  # fast-forwarding a night
		6:
			marks["start"] = NpcMindServer.now()
		16:
			marks["scaled"] = NpcMindServer.now()
			paused = true
		26:
			marks["paused"] = NpcMindServer.now()
			paused = false
			Engine.time_scale = 2.0
			NpcMindServer.clock = "scaled_process"
		27:
			marks["resume"] = NpcMindServer.now()
		37:
			Engine.time_scale = 1.0
			var process_seconds: float = marks["scaled"] - marks["start"]
			check("process ignores time_scale", absf(process_seconds - 1.0) < 0.01, process_seconds)  # 4.0 if scaled
			check("process stops while paused", marks["paused"] == marks["scaled"], [marks["scaled"], marks["paused"]])
			var scaled_seconds: float = NpcMindServer.now() - marks["resume"]
			check("scaled_process follows time_scale", absf(scaled_seconds - 2.0) < 0.02, scaled_seconds)
			print(JSON.stringify({"done": true}))
			return true
	return false
