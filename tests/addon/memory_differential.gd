extends SceneTree
## The per-node memory calls in the engine, for a differential test (tests/test_addon_memory_differential.py):
## MemoryStream nodes sharing a small profile, driven every frame as guards in a game drive them:
## each records the two people of its crowd (who changes every few seconds: refreshes, rehearsals),
## reads its awareness of one and recalls it (some streams recall before they record), plus seeded
## random calls (other entities: evictions). In the second half, half the streams only look, so
## their memories are forgotten. Run with --fixed-fps 2: fifty seconds pass. Prints one JSON line
## (full float precision): per frame the server's now before the calls, the frame's delta, each
## call with its result, and each memory signal with the frame it came in. The test replays the
## calls on a server that applies every call at once and compares.

const STREAMS := 12
const FRAMES := 100
const ENTITIES := [0, 1, 2, 3, 4, 5, 6, 7, 4611686018427387904, -3]

var streams: Array[Node] = []
var rng := RandomNumberGenerator.new()
var frame := 0
var frames := []
var signals := []
var calls := []


func _initialize() -> void:
	rng.seed = 20261201
	var profile: Resource = ClassDB.instantiate("MemoryProfile")
	profile.capacity = 4
	for i in STREAMS:
		var stream: Node = ClassDB.instantiate("MemoryStream")
		stream.profile = profile
		root.add_child(stream)
		streams.append(stream)
		for name in ["memory_formed", "memory_rehearsed", "memory_forgotten", "memory_evicted"]:
			stream.connect(name, func(entity: int, memory_type: int) -> void:
				signals.append([frame, i, name, entity, memory_type]))


func record(s: int, entity: int, memory_type: int, salience: float) -> void:
	streams[s].record_event(entity, memory_type, salience)
	calls.append([s, "record", entity, memory_type, salience, null])


func aware(s: int, entity: int) -> void:
	calls.append([s, "aware", entity, 0, 0.0, streams[s].awareness_of(entity)])


func recall(s: int, entity: int) -> void:
	calls.append([s, "recall", entity, 0, 0.0, streams[s].query_strongest(entity)])


func _process(delta: float) -> bool:
	frame += 1
	if frame > FRAMES:
		print(JSON.stringify({"frames": frames, "signals": signals}, "", false, true))
		return true
	calls = []
	for s in STREAMS:
		var quiet := frame > FRAMES / 2 and s >= STREAMS / 2
		var first: int = ENTITIES[(s + frame / 8) % ENTITIES.size()]
		var second: int = ENTITIES[(3 * s + frame / 12 + 1) % ENTITIES.size()]
		var memory_type := 0 if s >= STREAMS / 2 else s % 5  # the quiet ones hold trivia: it fades fast
		if quiet:
			aware(s, first)
			continue
		if s % 2:
			recall(s, first)  # recalled before this frame's writes: a queued wake, then writes
		record(s, first, memory_type, 0.5)
		record(s, second, memory_type, rng.randf_range(-0.2, 1.2))  # outside [0, 1]: clipped
		aware(s, first)
		if s % 2 == 0:
			recall(s, first)  # after its write: the refreshed memory, R = 1
		var pick := rng.randf()
		var other: int = ENTITIES[rng.randi_range(0, ENTITIES.size() - 1)]
		if pick < 0.3:
			record(s, other, rng.randi_range(0, 4), rng.randf())
		elif pick < 0.5:
			aware(s, other)
		elif pick < 0.6:
			recall(s, other)
	frames.append({"now": NpcMindServer.now(), "delta": delta, "calls": calls})
	return false
