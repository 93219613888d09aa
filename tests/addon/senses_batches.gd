extends SceneTree
## The due sight checks run in batches: at most 30 a second of the server's clock (every other frame
## under --fixed-fps 60), more when a sense's rate_hz is higher, and each sense keeps its rate. 60
## guards see at 10 Hz for 2 s: 1,200 checks in 60 of the 120 frames; then one sees at 60 Hz: every
## frame has checks and that one is checked in each. One JSON line per check.

const Build := preload("res://tests/addon/utility_builders.gd")
const GUARDS := 60
const FRAMES := 120
const WARMUP := 10

var frame := 0
var sights: Array[Node] = []
var checks_before := 0.0
var frames_with_checks := 0
var last := 0.0


func check(name: String, ok: bool, detail: Variant = null) -> void:
	print(JSON.stringify({"check": name, "ok": ok, "detail": detail}))


func _initialize() -> void:
	var person := Node2D.new()
	person.position = Vector2(50, 0)
	person.add_to_group("people")
	root.add_child(person)
	for i in GUARDS:
		var guard := Node2D.new()
		guard.name = "Guard%d" % i
		guard.add_child(ClassDB.instantiate("MemoryStream"))
		var sight: Node = ClassDB.instantiate("SightSense2D")
		sight.rate_hz = 10.0
		sight.rules = [Build.resource("SenseRule", {"group": &"people"})]
		guard.add_child(sight)
		root.add_child(guard)
		sights.append(sight)


func checks() -> float:
	return NpcMindServer.get_metrics()["senses/checks"]


func _process(_delta: float) -> bool:
	frame += 1
	if frame > WARMUP and checks() != last:  # at most one batch a frame: count the changes
		frames_with_checks += 1
	last = checks()
	if frame == WARMUP + FRAMES:
		check("10 Hz senses keep their rate", last - checks_before == GUARDS * 10.0 * FRAMES / 60.0, last - checks_before)
		check("their checks run in 30 batches a second: every other frame", frames_with_checks == FRAMES / 2,
			frames_with_checks)
		sights[0].rate_hz = 60.0
	if frame == WARMUP or frame == WARMUP + FRAMES:
		checks_before = last
		frames_with_checks = 0
	if frame == WARMUP + 2 * FRAMES:
		check("a 60 Hz sense makes every frame a batch", frames_with_checks == FRAMES, frames_with_checks)
		var seen: int = sights[0].get_recent_perceptions().size()
		check("and is checked in each (its last second: 60 perceptions)", seen == 60, seen)
		print(JSON.stringify({"done": true}))
		return true
	return false
