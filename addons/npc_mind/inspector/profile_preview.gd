@tool
extends "res://addons/npc_mind/inspector/live_preview.gd"
## A MemoryProfile's forgetting curves: R over time (a log time axis) for a fresh memory of each
## memory type at the chosen salience, computed with the real forgetting code
## (NpcMindDesigner.sample_forgetting), with the awareness thresholds (search, pursue) and the
## forget threshold drawn. Follows the resource live.

const SAMPLES := 200
const MIN_SECONDS := 0.5
## trivia, observation, interaction, hostile, trauma (the demo's legend colours)
const TYPE_COLORS := [Color(0.6, 0.6, 0.6), Color(0.3, 0.6, 0.95), Color(0.35, 0.8, 0.45), Color(0.92, 0.3, 0.25), Color(0.65, 0.3, 0.85)]

var profile: Object
var salience := 0.5
var ages := PackedFloat64Array()
var result := {}
var max_seconds := 3600.0

var _graph: ForgettingGraph
var _slider: HSlider
var _readout: Label
var _signature := ""


func _init() -> void:
	var title := Label.new()
	title.text = "Forgetting curves (R = e^(-t/S); S0 = base x (0.5 + salience))"
	title.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
	add_child(title)
	_graph = ForgettingGraph.new()
	_graph.owner_preview = self
	add_child(_graph)
	poll_seconds = 0.25
	_slider = add_slider_row("Salience", "The salience (0..1) of the fresh memories drawn: S0 = base stability x (0.5 + salience).")
	_slider.min_value = 0.0
	_slider.max_value = 1.0
	_slider.step = 0.01
	_slider.value = salience
	_slider.value_changed.connect(func(value: float) -> void:
		salience = value
		refresh(true))
	_readout = Label.new()
	_readout.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
	add_child(_readout)


func bind(target: Object) -> void:
	profile = target
	super(target)


func refresh(force: bool) -> void:
	var values := []
	for property: Dictionary in profile.get_property_list():
		if property.usage & PROPERTY_USAGE_STORAGE:
			values.append(profile.get(property.name))
	var signature := var_to_str([values, salience])
	if not force and signature == _signature:
		return
	_signature = signature
	# Enough time for the longest-lived type to be forgotten.
	var probe: Dictionary = NpcMindDesigner.sample_forgetting(profile, PackedFloat64Array([1.0]), salience)
	if probe.error == "":
		max_seconds = maxf(60.0, probe.stability.max() * -log(float(probe.forget)) * 1.2)
	ages.resize(SAMPLES)
	for index in SAMPLES:
		ages[index] = MIN_SECONDS * pow(max_seconds / MIN_SECONDS, index / float(SAMPLES - 1))
	result = NpcMindDesigner.sample_forgetting(profile, ages, salience)
	if result.error != "":
		_readout.text = "Invalid profile: %s" % result.error
		_readout.add_theme_color_override("font_color", Color(1.0, 0.45, 0.4))
	else:
		var parts := []
		for index in result.names.size():
			parts.append("%s S0 %s" % [result.names[index], _seconds(result.stability[index])])
		_readout.text = ", ".join(parts)
		_readout.remove_theme_color_override("font_color")
	_graph.queue_redraw()


static func _seconds(value: float) -> String:
	if value >= 3600.0:
		return "%.1f h" % (value / 3600.0)
	if value >= 60.0:
		return "%.1f min" % (value / 60.0)
	return "%.1f s" % value


class ForgettingGraph extends Control:
	var owner_preview: Object

	func _init() -> void:
		custom_minimum_size = Vector2(200, 170)

	func _draw() -> void:
		var font := get_theme_font("font", "Label")
		var font_size := get_theme_font_size("font_size", "Label") - 2
		var area := Rect2(Vector2(34, 6), size - Vector2(42, 24))
		draw_rect(area, Color(0.1, 0.11, 0.13))
		var preview: Object = owner_preview
		if preview == null or preview.result.is_empty() or preview.result.error != "":
			draw_string(font, area.position + Vector2(8, 20), "invalid profile", HORIZONTAL_ALIGNMENT_LEFT, -1, font_size + 2, Color(1.0, 0.45, 0.4))
			return
		var result: Dictionary = preview.result
		var span := Vector2(log(preview.MIN_SECONDS), log(preview.max_seconds))
		for level in [0.0, 0.5, 1.0]:
			var y: float = area.end.y - area.size.y * level
			draw_line(Vector2(area.position.x, y), Vector2(area.end.x, y), Color(1, 1, 1, 0.12))
			draw_string(font, Vector2(2, y + 4), "%.1f" % level, HORIZONTAL_ALIGNMENT_LEFT, -1, font_size, Color(0.7, 0.7, 0.7))
		for mark in [[1.0, "1 s"], [10.0, "10 s"], [60.0, "1 min"], [600.0, "10 min"], [3600.0, "1 h"], [36000.0, "10 h"], [86400.0, "1 d"]]:
			if mark[0] < preview.MIN_SECONDS or mark[0] > preview.max_seconds:
				continue
			var x := _x(area, span, mark[0])
			draw_line(Vector2(x, area.position.y), Vector2(x, area.end.y), Color(1, 1, 1, 0.08))
			draw_string(font, Vector2(x - 20, area.end.y + 14), mark[1], HORIZONTAL_ALIGNMENT_CENTER, 40, font_size, Color(0.7, 0.7, 0.7))
		for threshold in [["pursue", result.pursue], ["search", result.search], ["forget", result.forget]]:
			var y: float = area.end.y - area.size.y * float(threshold[1])
			draw_dashed_line(Vector2(area.position.x, y), Vector2(area.end.x, y), Color(1.0, 0.85, 0.4, 0.8), 1.0, 4.0)
			draw_string(font, Vector2(area.end.x - 90, y - 2), "%s %.2f" % threshold, HORIZONTAL_ALIGNMENT_RIGHT, 88, font_size, Color(1.0, 0.85, 0.4))
		for kind in result.r.size():
			var r: PackedFloat64Array = result.r[kind]
			var points := PackedVector2Array()
			for index in r.size():
				points.append(Vector2(_x(area, span, preview.ages[index]), area.end.y - area.size.y * clampf(r[index], 0.0, 1.0)))
			var color: Color = preview.TYPE_COLORS[kind % preview.TYPE_COLORS.size()]
			draw_polyline(points, color, 2.0, true)
			# The name where the curve crosses R = 0.5 (age S ln 2), alternately above and below it.
			var half_life: float = float(result.stability[kind]) * log(2.0)
			var at := Vector2(_x(area, span, clampf(half_life, preview.MIN_SECONDS, preview.max_seconds)), area.end.y - area.size.y * 0.5)
			var offset := -6.0 if kind % 2 == 0 else 14.0
			draw_string(font, at + Vector2(3, offset), result.names[kind], HORIZONTAL_ALIGNMENT_LEFT, -1, font_size, color)

	func _x(area: Rect2, span: Vector2, seconds: float) -> float:
		return area.position.x + area.size.x * (log(seconds) - span.x) / (span.y - span.x)
