@tool
extends HSplitContainer
## The NPC Mind panel: the running game's NPCs (filterable) and, for the selected one, its memories
## as fading bars, its selector's scores with a short history, its LLM decisions on a timeline, what
## each of its senses perceived in the last second and the actions its behaviors ran.
## It only draws what the game's debug feed sends (`receive`); it never talks to the game itself
## except through `select_requested` and `forget_freed_requested`, so the same panel works outside
## the editor (screenshots). NPCs are listed by their path in the current scene (two the engine named
## `@CharacterBody3D@3` are told apart); a freed NPC stays listed, marked, with its last data, until
## the game drops it (30 s) or "Drop freed" is pressed.

signal select_requested(npc_id: int)
signal forget_freed_requested

const HISTORY := 60  ## score samples kept per behavior (12 s at the feed's 5 Hz)
const TIMELINE_SECONDS := 60.0
## trivia, observation, interaction, hostile, trauma (the demo's legend colours)
const TYPE_COLORS := [Color(0.6, 0.6, 0.6), Color(0.3, 0.6, 0.95), Color(0.35, 0.8, 0.45), Color(0.92, 0.3, 0.25), Color(0.65, 0.3, 0.85)]
const TIER_COLORS := {0: Color(0.6, 0.6, 0.6), 1: Color(0.3, 0.8, 0.4), 2: Color(0.95, 0.75, 0.2), 3: Color(0.95, 0.35, 0.3)}
const SERIES_COLORS := [Color(0.95, 0.35, 0.3), Color(0.95, 0.75, 0.2), Color(0.35, 0.6, 0.95), Color(0.3, 0.8, 0.4), Color(0.75, 0.5, 0.95), Color(0.3, 0.85, 0.85), Color(0.9, 0.55, 0.3), Color(0.8, 0.8, 0.8)]

var selected_id := 0
var _ids := PackedInt64Array()
var _paths := PackedStringArray()
var _names := PackedStringArray()
var _freed: Array = []  ## per listed NPC: true once its node was freed
var _snapshot := {}
var _gone := ""  ## the selected NPC: "" in the game, "freed", or "dropped" from the list
var _history := {}  ## behavior -> Array[float]

var _filter: LineEdit
var _list: ItemList
var _status: Label
var _drop_freed: Button
var _header: Label
var _memories: MemoryBars
var _scores: ScoreView
var _decisions: DecisionTimeline
var _perceptions: TextRows
var _actions: TextRows


func _init() -> void:
	split_offset = 260
	size_flags_vertical = Control.SIZE_EXPAND_FILL
	var left := VBoxContainer.new()
	left.custom_minimum_size = Vector2(220, 0)
	add_child(left)
	_filter = LineEdit.new()
	_filter.placeholder_text = "Filter NPCs by name or path"
	_filter.clear_button_enabled = true
	_filter.text_changed.connect(func(_text: String) -> void: _fill_list())
	left.add_child(_filter)
	_list = ItemList.new()
	_list.size_flags_vertical = Control.SIZE_EXPAND_FILL
	_list.item_selected.connect(_on_item_selected)
	left.add_child(_list)
	var footer := HBoxContainer.new()
	left.add_child(footer)
	_status = Label.new()
	_status.text = "Run the game to see its NPCs."
	_status.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	footer.add_child(_status)
	_drop_freed = Button.new()
	_drop_freed.text = "Drop freed"
	_drop_freed.tooltip_text = "Remove the freed NPCs from the list now (the game drops them after 30 s)."
	_drop_freed.disabled = true
	_drop_freed.pressed.connect(func() -> void: forget_freed_requested.emit())
	footer.add_child(_drop_freed)

	var scroll := ScrollContainer.new()
	scroll.horizontal_scroll_mode = ScrollContainer.SCROLL_MODE_DISABLED
	add_child(scroll)
	var right := VBoxContainer.new()
	right.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	scroll.add_child(right)
	_header = Label.new()
	_header.text = "Select an NPC."
	right.add_child(_header)
	right.add_child(_section("Memories (R fades as e^(-t/S); ticks: awareness thresholds)"))
	_memories = MemoryBars.new()
	right.add_child(_memories)
	right.add_child(_section("Behavior scores (chosen highlighted) and their last %d samples" % HISTORY))
	_scores = ScoreView.new()
	right.add_child(_scores)
	right.add_child(_section("LLM decisions (last %d s; colour: tier)" % int(TIMELINE_SECONDS)))
	_decisions = DecisionTimeline.new()
	right.add_child(_decisions)
	right.add_child(_section("Perceived in the last second, by sense (entity · memory type, salience, times, where)"))
	_perceptions = TextRows.new()
	right.add_child(_perceptions)
	right.add_child(_section("Actions run, latest first (behavior, phase, action, result)"))
	_actions = TextRows.new()
	right.add_child(_actions)


func _section(text: String) -> Label:
	var label := Label.new()
	label.text = text
	label.add_theme_color_override("font_color", Color(0.65, 0.75, 0.9))
	return label


## A message of the `npc_mind` capture; true when it was one of ours.
func receive(message: String, data: Array) -> bool:
	match message:
		"npc_mind:npcs":
			_ids = data[0]
			_paths = data[1]
			_names = data[2]
			_freed = data[3] if data.size() > 3 else []
			_fill_list()
			return true
		"npc_mind:npc":
			_show(data[0])
			return true
	return false


func on_started() -> void:
	# A new run: its NPCs are new objects (a reselect by id would miss), so start from an empty list.
	_ids = PackedInt64Array()
	_paths = PackedStringArray()
	_names = PackedStringArray()
	_freed = []
	selected_id = 0
	_history.clear()
	_fill_list()
	_status.text = "Game running."


func on_stopped() -> void:
	_status.text = "Game stopped (last data kept)."


## Select an NPC by id (as a click does).
func select(npc_id: int) -> void:
	if npc_id != selected_id:
		selected_id = npc_id
		_history.clear()
		_snapshot = {}
		_gone = ""
	select_requested.emit(npc_id)
	for index in _list.item_count:
		if int(_list.get_item_metadata(index)) == npc_id:
			_list.select(index)


## An NPC as listed: its path in the current scene, led by its display name when the path does not
## already end with it.
static func npc_label(npc_name: String, path: String) -> String:
	if npc_name == "" or path.get_file() == npc_name:
		return path
	return "%s   %s" % [npc_name, path]


func _fill_list() -> void:
	var needle := _filter.text.to_lower()
	_list.clear()
	var freed_count := 0
	for index in _ids.size():
		var freed: bool = index < _freed.size() and _freed[index]
		freed_count += int(freed)
		var label := ("(freed) " if freed else "") + npc_label(_names[index], _paths[index])  # the mark first: long paths are cut
		if needle != "" and label.to_lower().find(needle) < 0:
			continue
		var row := _list.add_item(label)
		_list.set_item_metadata(row, _ids[index])
		_list.set_item_tooltip(row, "%s\ninstance id %d%s" % [_paths[index], _ids[index], "\nfreed: its last data is kept" if freed else ""])
		if freed:
			_list.set_item_custom_fg_color(row, Color(0.6, 0.6, 0.6))
		if _ids[index] == selected_id:
			_list.select(row)
	_drop_freed.disabled = freed_count == 0
	_status.text = "%d NPCs (%d shown%s)" % [_ids.size(), _list.item_count, ", %d freed" % freed_count if freed_count else ""]
	if selected_id != 0 and not _ids.has(selected_id) and _gone == "":
		_gone = "dropped"
		_header.text += "   (no longer in the game)"


func _on_item_selected(row: int) -> void:
	select(int(_list.get_item_metadata(row)))


func _show(snapshot: Dictionary) -> void:
	if int(snapshot.get("id", 0)) != selected_id:
		return
	if snapshot.get("freed", false):  # the last data stays on screen, marked
		_gone = "freed"
		var label := npc_label(snapshot.get("name", ""), snapshot.get("path", ""))
		if _snapshot.is_empty():  # selected after it was freed: nothing of it was seen
			_header.text = "%s   (freed)" % label
			_memories.show_rows([], {})
			_scores.show_scores(PackedStringArray(), [], "", {})
			_decisions.show_decisions([], 0.0)
			_perceptions.show_lines([])
			_actions.show_lines([])
		else:
			_header.text = "%s   (freed; its last data, t = %.1f s)" % [label, float(_snapshot.get("now", 0.0))]
		return
	_snapshot = snapshot
	var selector: Dictionary = snapshot.get("selector", {})
	var names: PackedStringArray = selector.get("names", PackedStringArray())
	var scores: Array = selector.get("scores", [])
	for index in names.size():
		var series: Array = _history.get(names[index], [])
		series.append(float(scores[index]) if index < scores.size() else 0.0)
		if series.size() > HISTORY:
			series.pop_front()
		_history[names[index]] = series
	var parts := [npc_label(snapshot.get("name", ""), snapshot.get("path", "")), "t = %.1f s" % float(snapshot.get("now", 0.0))]
	if selector.get("chosen", "") != "":
		parts.append("behavior: %s" % selector.chosen)
	if snapshot.has("memory_count"):
		parts.append("%d memories" % int(snapshot.memory_count))
	if snapshot.get("pending", false):
		parts.append("LLM thinking...")
	_header.text = "   ".join(parts)
	_memories.show_rows(snapshot.get("memories", []), snapshot.get("profile", {}))
	_scores.show_scores(names, scores, selector.get("chosen", ""), _history)
	_decisions.show_decisions(snapshot.get("decisions", []), float(snapshot.get("now", 0.0)))
	_perceptions.show_lines(perception_lines(snapshot))
	_actions.show_lines(action_lines(snapshot.get("actions", []), snapshot.has("selector")))


const ACTION_ROWS := 10  ## of the up to 16 the feed sends
const PHASE_NAMES := {"on_enter": "enter", "on_tick": "tick", "on_exit": "exit"}


## The perceptions section: per sense a heading line, then one line per (entity, memory type) it
## perceived in the last second; each line is [text, colour, tooltip].
static func perception_lines(snapshot: Dictionary) -> Array:
	var senses: Array = snapshot.get("senses", [])
	if senses.is_empty():
		return [["No senses (SightSense, HearingSense, TouchSense) on this NPC.", Color(0.6, 0.6, 0.6), ""]]
	var lines := []
	var rows: Array = snapshot.get("perceptions", [])
	for sense: Dictionary in senses:
		var count := int(sense.get("perceived", 0))
		var heading := "%s  (%s)   %s" % [sense.name, sense["class"], "%d perceptions" % count if count else "nothing in the last second"]
		lines.append([heading, Color(0.85, 0.85, 0.9), ""])
		for row: Dictionary in rows:
			if row.sense != sense.name:
				continue
			var text := "    %s · %s   salience %.2f   x%d (%d recorded)   %.1f s ago   at %s" % [
				MemoryBars.entity_label(row), row.type_name, float(row.salience), int(row.count),
				int(row.recorded), float(row.age), place(row.get("where", []))]
			var where: String = row.get("entity_path", "")
			var tip := "%s\nentity %d%s" % [MemoryBars.entity_label(row), int(row.entity), "\n" + where if where != "" else ""]
			lines.append([text, MindPanelColors.memory_type(int(row.type)).lightened(0.25), tip])
	var shown := rows.size()
	var total := int(snapshot.get("perception_count", shown))
	if total > shown:
		lines.append(["    (%d more not shown)" % (total - shown), Color(0.6, 0.6, 0.6), ""])
	return lines


## The actions section: the latest first, at most ACTION_ROWS; a skipped one (its mistake reported
## once in the Errors tab) in red.
static func action_lines(entries: Array, has_selector: bool) -> Array:
	if entries.is_empty():
		var none := "No actions ran yet." if has_selector else "No UtilitySelector on this NPC."
		return [[none, Color(0.6, 0.6, 0.6), ""]]
	var lines := []
	var recent := entries.slice(maxi(0, entries.size() - ACTION_ROWS))
	recent.reverse()
	for entry: Dictionary in recent:
		var phase: String = PHASE_NAMES.get(entry.phase, entry.phase)
		if int(entry.get("times", 1)) > 1:
			phase += " x%d" % int(entry.times)
		var ok: bool = entry.ok
		var text := "t %.2f s   %s   %s   %s   %s" % [float(entry.time), entry.behavior, phase, entry.action,
			"ok" if ok else "skipped (see the error)"]
		var tip := "%s[%d] of behavior %s" % [entry.phase, int(entry.index), entry.behavior]
		lines.append([text, Color(0.85, 0.85, 0.85) if ok else Color(0.95, 0.45, 0.4), tip])
	return lines


## A position as the tab shows it: (x, y) or (x, y, z), whole units.
static func place(where: Array) -> String:
	var parts := []
	for value in where:
		parts.append("%.0f" % float(value))
	return "(%s)" % ", ".join(parts) if not parts.is_empty() else "?"


## One bar per memory: R as the filled width (coloured by memory type), the forget and awareness
## thresholds as ticks, and the numbers beside it (awareness: of the entity, from its strongest memory).
class MemoryBars extends Control:
	const ROW := 22.0
	const LABEL_W := 170.0
	const BAR_W := 260.0
	var rows: Array = []
	var profile := {}

	func _init() -> void:
		custom_minimum_size = Vector2(700, ROW)

	func show_rows(new_rows: Array, new_profile: Dictionary) -> void:
		rows = new_rows
		profile = new_profile
		custom_minimum_size.y = max(1, rows.size()) * ROW + 4.0
		queue_redraw()

	func _draw() -> void:
		var font := get_theme_font("font", "Label")
		var size_px := get_theme_font_size("font_size", "Label")
		if rows.is_empty():
			draw_string(font, Vector2(4, ROW - 6), "No memories (or no MemoryStream).", HORIZONTAL_ALIGNMENT_LEFT, -1, size_px, Color(0.6, 0.6, 0.6))
			return
		var y := 2.0
		for row: Dictionary in rows:
			var who: String = entity_label(row)
			draw_string(font, Vector2(4, y + ROW - 7), "%s · %s" % [who, row.type_name], HORIZONTAL_ALIGNMENT_LEFT, LABEL_W - 8, size_px, Color(0.9, 0.9, 0.9))
			var bar := Rect2(LABEL_W, y + 3, BAR_W, ROW - 7)
			draw_rect(bar, Color(0.18, 0.18, 0.2))
			var level: int = clampi(int(row.awareness), 0, 3)
			draw_rect(Rect2(bar.position, Vector2(BAR_W * clampf(row.r, 0.0, 1.0), bar.size.y)), MindPanelColors.memory_type(int(row.type)))
			for key in ["forget", "search", "pursue"]:
				if profile.has(key):
					var x: float = bar.position.x + BAR_W * float(profile[key])
					draw_line(Vector2(x, bar.position.y - 2), Vector2(x, bar.end.y + 2), Color(1, 1, 1, 0.7), 1.0)
			var notes := "R %.3f   S %s   age %.1f s   recalls %d   %s" % [row.r, _seconds(row.s), row.age, row.recalls, AWARENESS[level]]
			if row.pinned:
				notes += "   pinned"
			if row.get("long_term", false):
				notes += "   long-term"
			draw_string(font, Vector2(LABEL_W + BAR_W + 10, y + ROW - 7), notes, HORIZONTAL_ALIGNMENT_LEFT, -1, size_px, Color(0.85, 0.85, 0.85))
			y += ROW

	const AWARENESS := ["none", "puzzled", "search", "pursue"]

	## The entity's name (a freed one's remembered name, marked), else its id.
	static func entity_label(row: Dictionary) -> String:
		var entity_name: String = row.get("entity_name", "")
		if entity_name == "":
			return str(row.entity)
		return entity_name + (" (freed)" if row.get("entity_freed", false) else "")

	func _get_tooltip(at_position: Vector2) -> String:
		var index := int((at_position.y - 2.0) / ROW)
		if index < 0 or index >= rows.size():
			return ""
		var row: Dictionary = rows[index]
		var where: String = row.get("entity_path", "")
		var state := "freed" if row.get("entity_freed", false) else where
		return "%s\nentity %d%s" % [entity_label(row), int(row.entity), "\n" + state if state != "" else ""]

	static func _seconds(value: float) -> String:
		if value >= 3600.0:
			return "%.1f h" % (value / 3600.0)
		return "%.0f s" % value if value >= 10.0 else "%.1f s" % value


## Each behavior's score as a bar (the chosen one highlighted) and all scores' recent history.
class ScoreView extends Control:
	const ROW := 20.0
	const LABEL_W := 110.0
	const BAR_W := 200.0
	const CHART := Vector2(300, 0)
	var names := PackedStringArray()
	var scores: Array = []
	var chosen := ""
	var history := {}

	func _init() -> void:
		custom_minimum_size = Vector2(700, 3 * ROW)

	func show_scores(new_names: PackedStringArray, new_scores: Array, new_chosen: String, new_history: Dictionary) -> void:
		names = new_names
		scores = new_scores
		chosen = new_chosen
		history = new_history
		custom_minimum_size.y = max(3, names.size()) * ROW + 6.0
		queue_redraw()

	func _draw() -> void:
		var font := get_theme_font("font", "Label")
		var size_px := get_theme_font_size("font_size", "Label")
		if names.is_empty():
			draw_string(font, Vector2(4, ROW - 5), "No UtilitySelector scores yet.", HORIZONTAL_ALIGNMENT_LEFT, -1, size_px, Color(0.6, 0.6, 0.6))
			return
		var top := 0.0
		for score in scores:
			top = maxf(top, float(score))
		var scale := maxf(top, 1.0)
		for index in names.size():
			var y := 2.0 + index * ROW
			var score: float = float(scores[index]) if index < scores.size() else 0.0
			var is_chosen: bool = names[index] == chosen
			var color: Color = MindPanelColors.series(index)
			if is_chosen:
				draw_rect(Rect2(0, y, LABEL_W + BAR_W + 60, ROW - 2), Color(1, 1, 1, 0.08))
			draw_string(font, Vector2(4, y + ROW - 6), ("> " if is_chosen else "  ") + names[index], HORIZONTAL_ALIGNMENT_LEFT, LABEL_W - 8, size_px, Color.WHITE if is_chosen else Color(0.8, 0.8, 0.8))
			draw_rect(Rect2(LABEL_W, y + 3, BAR_W, ROW - 8), Color(0.18, 0.18, 0.2))
			draw_rect(Rect2(LABEL_W, y + 3, BAR_W * clampf(score / scale, 0.0, 1.0), ROW - 8), color if is_chosen else color.darkened(0.45))
			draw_string(font, Vector2(LABEL_W + BAR_W + 6, y + ROW - 6), "%.3f" % score, HORIZONTAL_ALIGNMENT_LEFT, -1, size_px, Color(0.85, 0.85, 0.85))
		var chart := Rect2(LABEL_W + BAR_W + 70, 2, CHART.x, names.size() * ROW - 4)
		draw_rect(chart, Color(0.12, 0.12, 0.14))
		var peak := scale
		for series: Array in history.values():
			for value in series:
				peak = maxf(peak, float(value))
		for index in names.size():
			var series: Array = history.get(names[index], [])
			if series.size() < 2:
				continue
			var points := PackedVector2Array()
			for step in series.size():
				var x: float = chart.position.x + chart.size.x * step / float(HISTORY_LEN - 1)
				points.append(Vector2(x, chart.end.y - chart.size.y * clampf(float(series[step]) / peak, 0.0, 1.0)))
			draw_polyline(points, MindPanelColors.series(index), 2.0 if names[index] == chosen else 1.0, true)

	const HISTORY_LEN := 60


## LLM outcomes on a time axis (the last TIMELINE_SECONDS of the game clock), coloured by tier, and
## the latest ones in words.
class DecisionTimeline extends Control:
	const STRIP := 26.0
	const LINE := 18.0
	const SHOWN := 6
	var decisions: Array = []
	var now := 0.0

	func _init() -> void:
		custom_minimum_size = Vector2(700, STRIP + LINE)

	func show_decisions(new_decisions: Array, new_now: float) -> void:
		decisions = new_decisions
		now = new_now
		custom_minimum_size.y = STRIP + max(1, mini(SHOWN, decisions.size())) * LINE + 6.0
		queue_redraw()

	func _draw() -> void:
		var font := get_theme_font("font", "Label")
		var size_px := get_theme_font_size("font_size", "Label")
		var strip := Rect2(4, 4, 640, STRIP - 10)
		draw_rect(strip, Color(0.12, 0.12, 0.14))
		var start := now - 60.0
		for decision: Dictionary in decisions:
			var t: float = decision.t
			if t < start:
				continue
			var x: float = strip.position.x + strip.size.x * (t - start) / 60.0
			var tier: int = int(decision.tier)
			var color: Color = MindPanelColors.tier(tier)
			if decision.kind == "thinking":
				draw_line(Vector2(x, strip.position.y + 4), Vector2(x, strip.end.y - 4), color, 1.0)
			else:
				draw_rect(Rect2(x - 3, strip.position.y + 1, 6, strip.size.y - 2), color)
		draw_string(font, Vector2(strip.end.x + 6, strip.end.y - 2), "now", HORIZONTAL_ALIGNMENT_LEFT, -1, size_px, Color(0.6, 0.6, 0.6))
		if decisions.is_empty():
			draw_string(font, Vector2(4, STRIP + LINE - 4), "No LLM requests yet (or no AsyncLLMDecision).", HORIZONTAL_ALIGNMENT_LEFT, -1, size_px, Color(0.6, 0.6, 0.6))
			return
		var y := STRIP
		var recent := decisions.slice(maxi(0, decisions.size() - SHOWN))
		recent.reverse()
		for decision: Dictionary in recent:
			var text := ""
			if decision.kind == "thinking":
				text = "t %.1f s   asked the model" % float(decision.t)
			else:
				text = "t %.1f s   tier %d   %.0f ms   %s   (%s)" % [float(decision.t), int(decision.tier), float(decision.latency_ms), decision.intent, decision.reason]
			draw_string(font, Vector2(8, y + LINE - 4), text, HORIZONTAL_ALIGNMENT_LEFT, -1, size_px, MindPanelColors.tier(int(decision.tier)).lightened(0.3))
			y += LINE


## Lines of text, each [text, colour, tooltip] (the perceptions and actions sections).
class TextRows extends Control:
	const LINE := 18.0
	var lines: Array = []

	func _init() -> void:
		custom_minimum_size = Vector2(700, LINE + 4.0)

	func show_lines(new_lines: Array) -> void:
		lines = new_lines
		custom_minimum_size.y = max(1, lines.size()) * LINE + 4.0
		queue_redraw()

	## The text of each line (what a test reads).
	func texts() -> PackedStringArray:
		var found := PackedStringArray()
		for line: Array in lines:
			found.append(line[0])
		return found

	func _draw() -> void:
		var font := get_theme_font("font", "Label")
		var size_px := get_theme_font_size("font_size", "Label")
		var y := 2.0
		for line: Array in lines:
			draw_string(font, Vector2(4, y + LINE - 4), line[0], HORIZONTAL_ALIGNMENT_LEFT, -1, size_px, line[1])
			y += LINE

	func _get_tooltip(at_position: Vector2) -> String:
		var index := int((at_position.y - 2.0) / LINE)
		return lines[index][2] if index >= 0 and index < lines.size() else ""


## Colours shared by the views.
class MindPanelColors:
	static func memory_type(kind: int) -> Color:
		return TYPE_COLORS[clampi(kind, 0, TYPE_COLORS.size() - 1)]

	static func tier(tier: int) -> Color:
		return TIER_COLORS.get(tier, Color.WHITE)

	static func series(index: int) -> Color:
		return SERIES_COLORS[index % SERIES_COLORS.size()]
