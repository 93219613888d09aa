extends SceneTree
## The per-node memory calls in the engine, for a differential test (tests/test_addon_memory_differential.py):
## MemoryStream nodes sharing two small profiles (capacity 4), driven every frame as games drive them.
## Run with --fixed-fps 2: fifty seconds pass. Prints one JSON line (full float precision): each
## stream's profile fields that are not the defaults, how many streams there are before the first
## frame, per frame the server's now before the calls, the frame's delta, whether the tree was
## paused, each call [stream, op, entity, memory type, salience, result, call shape] (result
## "refused": the engine refused the call), and each memory signal with the frame it came in (and
## the calls its handler made). The test replays the calls on a server that applies every call at
## once and compares every answer, signal and engine error.
##
## Each frame, in this order (each group is there so that one rule of the deferred path is seen):
## - late streams read their entity first thing (the frame's first calls, right after the fold) and
##   write it last thing: the frame state the fold and the step reset (`MemoryBank._new_frame`);
## - evictors, full, write a new entity and then recall the one that write evicts (the recall row's
##   room); they start at staggered frames, so rows with room 1 and 2 are seen too;
## - rehearsers, of a second profile whose refractory period is shorter than a frame (a second
##   pool), write the entity they recalled in the frame before, which rehearses it, and recall it
##   (the recall row's count of writes that only refresh the memory), or recall it first;
## - a forgetful stream reads a fading memory every frame; every fourth frame it writes it, reads
##   all its memories (which applies every queued write), writes another and reads the first again
##   (a stream whose writes were applied is not read from the frame's table); in other frames it
##   recalls it and then reads it (after the wake, not the table's level);
## - a listener holds one memory and forms a new trivia memory each frame; on each of its
##   memory_evicted signals it reads the evicted entity, recalls and writes the memory it holds:
##   calls made while the server delivers its signals (the write is queued in the binding's C layer
##   until the delivery returns), logged with the signal;
## - the crowd: guards recording the two people of their crowd (refreshes, rehearsals) plus seeded
##   random calls, reading and recalling (the wake order, a refreshed recall's R = 1); per guard in
##   its own turn in some blocks of frames, all records then all reads in others; in the second
##   half, half of them only look, so their memories are forgotten; between the records and the
##   reads, some frames call NpcMindServer.advance, which the server's clock mode refuses after
##   its fold applied the queued writes (so the fold must reset the frame's state itself);
## - spawners: every seventh frame one writes, is freed, and a new stream takes its place, writes
##   and reads in the same frame;
## - a switcher's profile changes every tenth frame, between its writes;
## - a wide stream (the default profile) writes nine entities in some frames and reads the ninth;
## - a converter writes with a whole float id (the bank queues it, not the binding) and reads it; a
##   power-curve stream recalls (at once) and reads; a batched stream calls the server's
##   record_batch and query_strongest_batch between its reads;
## - bad calls (a float, non-finite, String or null id, a type out of range or null, a NaN,
##   infinite, String or null salience) and calls the binding converts (2.0, true, 1e19), on crowd
##   streams: the same refusals and errors either way;
## - refreshers write two memories they hold (all refreshes: the fold's one-pass refresh), except in
##   some frames where they all write new ones (the pass does not pay and rests);
## - mixed streams write a new memory, then refresh the weakest one, which the new one evicts (an
##   NPC whose events are not all refreshes must not take the refresh pass).
## In silent frames nobody reads: the next frame's reads have no table from the frame before. In a few
## frames the tree is paused: the server's clock stands still, writes and reads come at one time.
## Calls go through typed variables (MemoryStream and typed arguments: the engine's ptrcall), untyped
## Object variables (a Variant call), or a typed MemoryStream with untyped arguments.

const FRAMES := 100
const CROWD := 12
const ENTITIES := [0, 1, 2, 3, 4, 5, 6, 7, 4611686018427387904, -3]
# stream groups, in stream order after the crowd
const EVICTORS := 3
const REFRESHERS := 6
const MIXED := 3
const LATE := 2
const REHEARSERS := 2
const FORGETFUL := 1
const LISTENER := 1
const SPAWNERS := 2
const SWITCHERS := 1
const WIDE := 1
const CONVERTER := 1
const POWER := 1
const BATCHED := 1
const EVICTOR_START := [1, 31, 62]  # each fills up from empty there: rows with room 2, 1, then 0
const TYPED := 0
const OBJECT := 1
const TYPED_VARIANT := 2  # a typed receiver, untyped arguments
const SHAPES := ["typed", "object", "typed_variant"]
const TRIVIA := 0
const SMALL := 0  # the profiles: capacity 4; capacity 4 and a refractory period under a frame; none
const QUICK := 1
const DEFAULTS := 2
const POWER_CURVE := 3  # capacity 4, the power curve, trivia fading fast (its recalls go at once)
const HOSTILE := 3
# [op, entity, memory type, salience, shape], a few each bad-call frame, in turn
const BAD_CALLS := [
	["record", 1.5, 0, 0.5, OBJECT],  # a float id: refused by the binding
	["record", INF, 0, 0.5, OBJECT],
	["record", 2, 7, 0.5, TYPED],  # a type out of range: the server's error
	["record", 2, -1, 0.5, OBJECT],
	["record", 2, 0, NAN, TYPED],
	["record", 2, 0, INF, OBJECT],
	["record", 2, 0, -INF, TYPED],
	["aware", 1.5, 0, 0.0, OBJECT],
	["recall", 2.5, 0, 0.0, TYPED_VARIANT],
	["aware", "3", 0, 0.0, OBJECT],
	["record", 2.0, 1.0, 1, OBJECT],  # converted: a whole float id, a float type, an int salience
	["record", true, 0, 0.5, TYPED_VARIANT],
	["aware", 2.0, 0, 0.0, OBJECT],
	["recall", 3.0, 0, 0.0, TYPED_VARIANT],
	["record", 1e19, 0, 0.5, OBJECT],  # a whole float beyond int64: the uint64 id's bits
	["recall", 1e19, 0, 0.0, OBJECT],
	["record", 1.5, 0, 0.5, TYPED_VARIANT],
	["aware", NAN, 0, 0.0, OBJECT],
	["record", 3, 0, NAN, OBJECT],
	["aware", null, 0, 0.0, OBJECT],  # null reaches the server as None: its TypeError
	["record", 2, null, 0.5, TYPED_VARIANT],
	["record", 2, 0, null, OBJECT],
	["record", 2, 0, "0.5", OBJECT],  # a String salience: refused by the binding
	["record", 2, 5, 0.5, TYPED_VARIANT],
]

var profiles := []  # per stream: its profile's fields that are not the defaults
var typed: Array[MemoryStream] = []
var untyped: Array[Object] = []
var rng := RandomNumberGenerator.new()
var frame := 0
var bad_next := 0
var frames := []
var signals := []
var calls := []
var profile: Resource
var quick: Resource
var power: Resource
var spawned := []  # each spawner's stream now
var initial_streams := 0


func _initialize() -> void:
	rng.seed = 20261201
	profile = ClassDB.instantiate("MemoryProfile")
	profile.capacity = 4
	quick = ClassDB.instantiate("MemoryProfile")
	quick.capacity = 4
	quick.rehearsal_refractory_s = 0.25  # each frame's write of a memory rehearses it
	power = ClassDB.instantiate("MemoryProfile")
	power.capacity = 4
	power.curve = "power"
	power.stability_trivia = 1.0
	for i in wide_stream() + WIDE + CONVERTER + POWER + BATCHED:
		var group := i - (CROWD + EVICTORS + REFRESHERS + MIXED + LATE)
		var kind := QUICK if group >= 0 and group < REHEARSERS else SMALL
		if i == wide_stream():
			kind = DEFAULTS
		elif i == wide_stream() + WIDE + CONVERTER:
			kind = POWER_CURVE
		add_stream(kind)
	for k in SPAWNERS:
		spawned.append(listener_stream() + LISTENER + k)
	initial_streams = typed.size()


## A new stream (the next index) of profile SMALL, QUICK or DEFAULTS, in the tree, its signals logged.
func add_stream(kind: int) -> int:
	var i := typed.size()
	var stream: MemoryStream = ClassDB.instantiate("MemoryStream")
	stream.profile = [profile, quick, null, power][kind]
	profiles.append([
		{"capacity": 4},
		{"capacity": 4, "rehearsal_refractory_s": 0.25},
		{},
		{"capacity": 4, "curve": "power", "base_stability": [1.0, 30.0, 120.0, 600.0, 3600.0]},
	][kind])
	root.add_child(stream)
	typed.append(stream)
	untyped.append(stream)
	for name in ["memory_formed", "memory_rehearsed", "memory_forgotten", "memory_evicted"]:
		stream.connect(name, func(entity: int, memory_type: int) -> void:
			signals.append([frame, i, name, entity, memory_type])
			if i == listener_stream() and name == "memory_evicted":
				listen(i, entity))
	return i


## The listener's handler of memory_evicted: its calls go with the signal in the log.
func listen(s: int, entity: int) -> void:
	var frame_calls := calls
	calls = []
	if not is_silent(frame + 1):  # the delivery comes before the next frame's calls
		aware(s, entity, TYPED)
		recall(s, 800, OBJECT)
	record(s, 800, HOSTILE, 1.0, TYPED)
	signals[-1].append(calls)
	calls = frame_calls


func record(s: int, entity: int, memory_type: int, salience: float, shape: int) -> void:
	if shape == TYPED:
		typed[s].record_event(entity, memory_type, salience)
	else:
		var node: Object = untyped[s]
		node.record_event(entity, memory_type, salience)
	calls.append([s, "record", entity, memory_type, salience, null, SHAPES[shape]])


func aware(s: int, entity: int, shape: int) -> void:
	read(s, "aware", entity, shape)


func recall(s: int, entity: int, shape: int) -> void:
	read(s, "recall", entity, shape)


func read(s: int, op: String, entity: int, shape: int) -> void:
	var result: Variant
	if shape == TYPED:
		var stream: MemoryStream = typed[s]
		result = stream.awareness_of(entity) if op == "aware" else stream.query_strongest(entity)
	else:
		var node: Object = untyped[s]
		result = node.awareness_of(entity) if op == "aware" else node.query_strongest(entity)
	calls.append([s, op, entity, 0, 0.0, result, SHAPES[shape]])


func memories(s: int) -> void:
	calls.append([s, "memories", 0, 0, 0.0, typed[s].get_memories(), SHAPES[TYPED]])


## A call with arguments of any type: [its result], or null when the engine refused the call (a
## script error ends this function, not the caller).
func attempt(s: int, op: String, entity: Variant, memory_type: Variant, salience: Variant, shape: int) -> Variant:
	var result: Variant = null
	if shape == TYPED:  # typed arguments (the values of BAD_CALLS' typed rows fit them)
		var id: int = entity
		var kind: int = memory_type
		var weight: float = salience
		if op == "record":
			typed[s].record_event(id, kind, weight)
		elif op == "aware":
			result = typed[s].awareness_of(id)
		else:
			result = typed[s].query_strongest(id)
	elif shape == TYPED_VARIANT:
		var stream: MemoryStream = typed[s]
		if op == "record":
			stream.record_event(entity, memory_type, salience)
		elif op == "aware":
			result = stream.awareness_of(entity)
		else:
			result = stream.query_strongest(entity)
	else:
		var node: Object = untyped[s]
		if op == "record":
			node.record_event(entity, memory_type, salience)
		elif op == "aware":
			result = node.awareness_of(entity)
		else:
			result = node.query_strongest(entity)
	return [result]


func bad(s: int) -> void:
	var call: Array = BAD_CALLS[bad_next % BAD_CALLS.size()]
	bad_next += 1
	var done: Variant = attempt(s, call[0], call[1], call[2], call[3], call[4])
	var result: Variant = "refused" if typeof(done) == TYPE_NIL else done[0]
	calls.append([s, call[0], encoded(call[1]), encoded(call[2]), encoded(call[3]), result, SHAPES[call[4]]])


## JSON holds no NaN: a tagged value the test decodes (infinities print as 1e99999, which it reads).
func encoded(value: Variant) -> Variant:
	if typeof(value) == TYPE_FLOAT and is_nan(value):
		return {"float": "nan"}
	return value


## No read at all in the frame (nor in the signal handlers before it): the next frame has no table.
func is_silent(f: int) -> bool:
	return f % 16 == 8


## A stream that is freed now and then, with writes queued, and replaced by a new one (which may
## take the freed node's address and the freed stream's handle) that writes and reads at once.
func spawner(k: int, silent: bool) -> void:
	var s: int = spawned[k]
	record(s, 900 + k, HOSTILE, 0.7, TYPED)
	if frame % 7 == 3 + k:
		record(s, 910 + frame, TRIVIA, 0.5, OBJECT)
		typed[s].free()  # its queued writes apply, then it is gone: no signal of it after this
		calls.append([s, "free", 0, 0, 0.0, null, SHAPES[TYPED]])
		s = add_stream(SMALL)
		spawned[k] = s
		calls.append([s, "spawn", 0, 0, 0.0, null, SHAPES[TYPED]])
		record(s, 900 + k, HOSTILE, 0.7, TYPED)
	if not silent:
		aware(s, 900 + k, OBJECT)
		recall(s, 900 + k, TYPED)


## A stream whose profile changes every tenth frame, between writes (its memories move to the
## other profile's pool; the queued writes go first).
func switcher(s: int, silent: bool) -> void:
	record(s, 950, HOSTILE, 0.6, TYPED)
	if frame % 10 == 6:
		record(s, 960 + frame, TRIVIA, 0.5, OBJECT)
		var to_quick := frame % 20 == 6
		typed[s].profile = quick if to_quick else profile
		var fields := {"capacity": 4, "rehearsal_refractory_s": 0.25} if to_quick else {"capacity": 4}
		calls.append([s, "profile", fields, 0, 0.0, null, SHAPES[TYPED]])
		record(s, 950, HOSTILE, 0.6, OBJECT)
	if not silent:
		aware(s, 950, TYPED)
		recall(s, 950, OBJECT)


## A stream of the default profile (64 memories): seven refreshes a frame, and every fourth frame an
## eighth and a ninth entity, which it reads every frame (their R falls in between): the binding
## answers a read of an entity the stream's queued writes wrote with R = 1, for up to eight such
## entities a frame (the ninth sends the stream's reads to Python).
func wide(s: int, silent: bool) -> void:
	for j in 7:
		record(s, 700 + j, TRIVIA, 0.5, TYPED if j % 2 else OBJECT)
	if frame % 4 == 0:
		record(s, 707, TRIVIA, 0.5, OBJECT)
		if not silent:
			aware(s, 707, TYPED)  # written: pursue, whatever the frame's table says
		record(s, 708, TRIVIA, 0.5, TYPED)
	if not silent:
		aware(s, 708, OBJECT)
		aware(s, 707, OBJECT)
		aware(s, 700, TYPED)


## Every third frame a record_event with a whole float id (the binding's C queue takes ints only:
## the bank queues it), then a read of that entity (the binding must not answer it from the table).
func converter(s: int) -> void:
	aware(s, 990, TYPED)
	if frame % 3 == 0:
		attempt(s, "record", 990.0, TRIVIA, 0.5, OBJECT)
		calls.append([s, "record", 990.0, TRIVIA, 0.5, null, SHAPES[OBJECT]])
		aware(s, 990, TYPED)


## The power curve: its recalls are never the table's (they go at once); a read after one is not
## the table's level.
func power_stream(s: int) -> void:
	aware(s, 991, TYPED)
	if frame % 8 == 0:
		record(s, 991, TRIVIA, 0.0, OBJECT)
	elif frame % 8 == 2:  # a second after the write: search (forgotten a little later)
		recall(s, 991, OBJECT)
		aware(s, 991, TYPED)


## The server's batched calls between per-node reads: a write and a recall of many streams that the
## binding's answers for the frame know nothing of.
func batched(s: int) -> void:
	if frame % 8 == 0:  # a per-node write too, now and then: the binding answers the stream's reads
		record(s, 611, HOSTILE, 0.5, OBJECT)
	aware(s, 610, TYPED)
	var ids := PackedInt32Array([typed[s].get_server_id()])
	var entities := PackedInt64Array([610])
	if frame % 8 == 1:
		NpcMindServer.record_batch(ids, entities, PackedInt32Array([TRIVIA]), PackedFloat32Array([0.5]))
		calls.append([s, "record_batch", 610, TRIVIA, 0.5, null, SHAPES[OBJECT]])
		aware(s, 610, TYPED)
	elif frame % 8 == 5:
		var found: Dictionary = NpcMindServer.query_strongest_batch(ids, entities)
		var result := {"retrievability": Array(found["retrievability"]), "memory_type": Array(found["memory_type"])}
		calls.append([s, "recall_batch", 610, 0, 0.0, result, SHAPES[OBJECT]])
		aware(s, 610, TYPED)


func wide_stream() -> int:
	return listener_stream() + LISTENER + SPAWNERS + SWITCHERS


func listener_stream() -> int:
	return CROWD + EVICTORS + REFRESHERS + MIXED + LATE + REHEARSERS + FORGETFUL


func crowd(silent: bool) -> void:
	var phased := (frame - 1) / 10 % 2 == 1  # all records, then all reads
	var reads := []
	for s in CROWD:
		var shape := TYPED if (s + frame) % 2 == 0 else OBJECT
		var quiet := frame > FRAMES / 2 and s >= CROWD / 2
		var first: int = ENTITIES[(s + frame / 8) % ENTITIES.size()]
		var second: int = ENTITIES[(3 * s + frame / 12 + 1) % ENTITIES.size()]
		var memory_type := 0 if s >= CROWD / 2 else s % 5  # the quiet ones hold trivia: it fades fast
		var pick := rng.randf()
		var other: int = ENTITIES[rng.randi_range(0, ENTITIES.size() - 1)]
		var salience := rng.randf_range(-0.2, 1.2)  # outside [0, 1]: clipped
		var extra := [rng.randi_range(0, 4), rng.randf()]
		if silent:
			if not quiet:
				record(s, first, memory_type, 0.5, shape)
			continue
		if quiet:
			aware(s, first, shape)
			continue
		if s % 2 and not phased:
			recall(s, first, shape)  # recalled before this frame's writes: a queued wake, then writes
		record(s, first, memory_type, 0.5, shape)
		record(s, second, memory_type, salience, shape)
		if pick < 0.3:
			record(s, other, extra[0], extra[1], shape)
		var read := func() -> void:
			aware(s, first, shape)
			if s % 2 == 0 or phased:
				recall(s, first, shape)  # after its write: the refreshed memory, R = 1
			if pick >= 0.3 and pick < 0.5:
				aware(s, other, shape)
			elif pick >= 0.5 and pick < 0.6:
				recall(s, other, shape)
		if phased:
			reads.append(read)
		else:
			read.call()
	if phased and frame % 4 == 2:
		NpcMindServer.advance(0.5)  # refused: the clock is the engine's
		calls.append([-1, "advance", 0.5, 0, 0.0, null, SHAPES[OBJECT]])
	for read in reads:
		read.call()


func _process(delta: float) -> bool:
	frame += 1
	if frame > FRAMES:
		var out := {"profiles": profiles, "streams": initial_streams, "frames": frames, "signals": signals}
		print(JSON.stringify(out, "", false, true))
		return true
	calls = []
	paused = frame >= 45 and frame <= 47  # the server's clock stands still: frames at one time
	var silent := is_silent(frame)
	var base := CROWD + EVICTORS + REFRESHERS + MIXED
	for k in LATE:  # the frame's first calls
		if not silent:
			aware(base + k, 100 + k, TYPED if k == 0 else OBJECT)
			recall(base + k, 100 + k, OBJECT if k == 0 else TYPED)
	for k in EVICTORS:
		var s := CROWD + k
		if frame < EVICTOR_START[k]:
			continue
		var shape := TYPED if k % 2 == 0 else OBJECT
		for j in k % 2 + 1:  # one or two new memories: the row's room is 0, or 1 while it fills
			record(s, 1000 + 4 * frame + j, HOSTILE, 1.0, shape)
		if not silent:
			if k == 2:
				aware(s, 200 + k, TYPED)  # the binding's answer holds for as many writes as the row has room
			recall(s, 200 + k, shape)  # the weakest memory: evicted by the writes just queued
		record(s, 200 + k, TRIVIA, 0.0, shape)  # formed again: next frame, the weakest again
	for k in REHEARSERS:
		var s := base + LATE + k
		var shape := OBJECT if k == 0 else TYPED
		if silent:
			continue
		if k == 0:
			record(s, 500, HOSTILE, 0.8, shape)  # 0.5 s after the wake: a rehearsal
			recall(s, 500, shape)  # not the row's answer (S and k grew)
		else:
			recall(s, 501, shape)  # from the row: a queued wake
			record(s, 501, HOSTILE, 0.8, shape)  # after the wake, at its time: a refresh
			aware(s, 501, shape)
			recall(s, 501, shape)
	for k in FORGETFUL:
		var s := base + LATE + REHEARSERS + k
		if silent:
			continue
		aware(s, 600, TYPED)  # every frame: the next frame's table holds the pair
		if frame % 4 == 0:
			record(s, 600, TRIVIA, 0.5, TYPED)  # R was about e^-0.4 (search); now 1 (pursue)
			memories(s)  # applies the queue
			record(s, 601, TRIVIA, 0.5, OBJECT)  # queued after it: the first write still counts
			aware(s, 600, OBJECT)
		elif frame % 4 == 2:
			recall(s, 600, OBJECT)  # from the frame's table, the wake queued: R is now 1 ...
			aware(s, 600, TYPED)  # ... so not the table's level
	for k in WIDE:
		wide(wide_stream() + k, silent)
	if not silent:
		converter(wide_stream() + WIDE)
		power_stream(wide_stream() + WIDE + CONVERTER)
		batched(wide_stream() + WIDE + CONVERTER + POWER)
	record(listener_stream(), 800, HOSTILE, 1.0, OBJECT)
	record(listener_stream(), 5000 + frame, TRIVIA, 0.1, TYPED)  # full after 3 frames: evicts one
	crowd(silent)
	for k in SPAWNERS:
		spawner(k, silent)
	for k in SWITCHERS:
		switcher(listener_stream() + LISTENER + SPAWNERS + k, silent)
	if frame % 3 == 1 and not silent:
		for k in 2:
			bad((frame + k) % CROWD)
	var all_new := frame % 10 == 5  # the refreshers' events are new: the refresh pass rests
	for k in REFRESHERS:
		var s := CROWD + EVICTORS + k
		var shape := TYPED if k % 2 == 0 else OBJECT
		for j in 2:
			var entity := 2000 + 4 * frame + 2 * j if all_new else 300 + 2 * k + j
			record(s, entity, k % 5, 0.5, shape)
	for k in MIXED:
		var s := CROWD + EVICTORS + REFRESHERS + k
		var shape := OBJECT if k % 2 == 0 else TYPED
		record(s, 3000 + 4 * frame + k, HOSTILE, 1.0, shape)  # a new memory evicts the weakest ...
		record(s, 400 + k, TRIVIA, 0.0, shape)  # ... this one, refreshed in the same frame after it
	for k in LATE:  # the frame's last calls (no read after them: the fold applies them)
		if not silent:
			record(base + k, 100 + k, 1, 0.5, OBJECT if k == 0 else TYPED)
	frames.append({"now": NpcMindServer.now(), "delta": delta, "paused": paused, "calls": calls})
	return false
