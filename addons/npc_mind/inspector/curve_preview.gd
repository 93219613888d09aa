@tool
extends "res://addons/npc_mind/inspector/live_preview.gd"
## A UtilityConsideration's response curve over its input range, drawn from the real curve code
## (NpcMindDesigner.sample_consideration: the same path the server scores with), a test-input
## slider with the resulting score, and one named field per parameter of the chosen family (with its
## range and tooltip). Follows the resource live: changing the family, a parameter, the range or
## `invert` redraws it. Works outside the editor too (no editor-only classes are required).

const SAMPLES := 161

var undo_redo: Object  ## an EditorUndoRedoManager in the editor: parameter edits can be undone
var consideration: Object
var samples := PackedFloat64Array()  ## the inputs drawn (raw units)
var scores := PackedFloat64Array()  ## the curve at each of them
var error := ""
var test_input := 0.5
var test_score := 0.0
var param_fields := {}  ## parameter name -> its Range control

var _graph: CurveGraph
var _slider: HSlider
var _readout: Label
var _params_box: VBoxContainer
var _error_label: Label
var _signature := ""
var _family := ""


func _init() -> void:
	_graph = CurveGraph.new()
	_graph.owner_preview = self
	add_child(_graph)
	_slider = add_slider_row("Test input", "Try an input: the dot shows the score this consideration gives it.")
	_slider.step = 0.0
	_slider.value_changed.connect(_on_test_input)
	_readout = Label.new()
	add_child(_readout)
	_error_label = Label.new()
	_error_label.add_theme_color_override("font_color", Color(1.0, 0.45, 0.4))
	_error_label.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
	_error_label.visible = false
	add_child(_error_label)
	_params_box = VBoxContainer.new()
	add_child(_params_box)


func bind(target: Object) -> void:
	consideration = target
	super(target)


## The input domain drawn: the input range when it is used, else [0, 1] (for saturating: up to
## 10 k, where it reaches 0.9).
func domain() -> Vector2:
	if _uses_range():
		return Vector2(consideration.input_min, consideration.input_max)
	if String(consideration.curve_type) == "saturating":
		var k := float(_params().get("k", 1.0))
		return Vector2(0.0, maxf(10.0 * k, 1.0))
	return Vector2(0.0, 1.0)


func _uses_range() -> bool:
	if "use_input_range" in consideration:
		return bool(consideration.use_input_range)
	return true


func _params() -> Dictionary:
	var params: Variant = consideration.curve_params
	return params if params is Dictionary else {}


func refresh(force: bool) -> void:
	var signature := var_to_str([consideration.curve_type, consideration.curve_params, _uses_range(),
		consideration.input_min, consideration.input_max, consideration.invert,
		consideration.curve.get_instance_id() if consideration.curve != null else 0,
		str(consideration.to_dict().get("points", []))])
	if not force and signature == _signature:
		return
	_signature = signature
	var family := String(consideration.curve_type)
	if family != _family:
		_family = family
		_build_param_fields()
	else:
		_sync_param_fields()
	var span := domain()
	samples.resize(SAMPLES)
	for index in SAMPLES:
		samples[index] = lerpf(span.x, span.y, index / float(SAMPLES - 1))
	var sampled: Dictionary = NpcMindDesigner.sample_consideration(consideration, samples)
	scores = sampled.scores
	error = sampled.error
	_error_label.text = error
	_error_label.visible = error != ""
	_slider.min_value = span.x
	_slider.max_value = span.y
	test_input = clampf(test_input, span.x, span.y)
	_slider.set_value_no_signal(test_input)
	_score_test_input()


func _on_test_input(value: float) -> void:
	test_input = value
	_score_test_input()


func _score_test_input() -> void:
	var one: Dictionary = NpcMindDesigner.sample_consideration(consideration, PackedFloat64Array([test_input]))
	var got: PackedFloat64Array = one.scores
	test_score = got[0] if got.size() == 1 else 0.0
	_readout.text = "input %s -> score %.3f" % [_number(test_input), test_score] if error == "" else "cannot score: see below"
	_graph.queue_redraw()


func _build_param_fields() -> void:
	for child in _params_box.get_children():
		child.queue_free()
	param_fields.clear()
	var specs: Array = NpcMindDesigner.get_curve_parameters(_family)
	if specs.is_empty() and _family == "table":
		var note := Label.new()
		note.text = "A table curve follows its Curve (below): edit it with the curve editor."
		note.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
		_params_box.add_child(note)
	for spec: Dictionary in specs:
		var row := HBoxContainer.new()
		row.tooltip_text = spec.tooltip
		var label := Label.new()
		label.text = String(spec.name)
		label.custom_minimum_size.x = 80
		label.tooltip_text = spec.tooltip
		label.mouse_filter = Control.MOUSE_FILTER_PASS
		row.add_child(label)
		var field: Range = _number_field()
		field.min_value = spec.min
		field.max_value = spec.max
		field.step = 0.001
		field.allow_greater = true
		field.allow_lesser = true
		field.tooltip_text = "%s\nDefault %s; slider %s to %s (type any value)." % [spec.tooltip, _number(spec.default), _number(spec.min), _number(spec.max)]
		field.size_flags_horizontal = Control.SIZE_EXPAND_FILL
		field.set_value_no_signal(float(_params().get(spec.name, spec.default)))
		field.value_changed.connect(_on_param_changed.bind(String(spec.name)))
		row.add_child(field)
		_params_box.add_child(row)
		param_fields[String(spec.name)] = field


func _sync_param_fields() -> void:
	var specs: Array = NpcMindDesigner.get_curve_parameters(_family)
	for spec: Dictionary in specs:
		var field: Range = param_fields.get(String(spec.name))
		if field != null:
			field.set_value_no_signal(float(_params().get(spec.name, spec.default)))


func _number_field() -> Range:
	if ClassDB.class_exists("EditorSpinSlider") and ClassDB.can_instantiate("EditorSpinSlider"):
		return ClassDB.instantiate("EditorSpinSlider")
	return SpinBox.new()


## Sets one parameter (only this family's parameters are kept: a family change drops the others).
func set_param(param_name: String, value: float) -> void:
	var specs: Array = NpcMindDesigner.get_curve_parameters(_family)
	var kept := {}
	for spec: Dictionary in specs:
		if _params().has(spec.name):
			kept[spec.name] = _params()[spec.name]
	kept[param_name] = value
	var before: Dictionary = _params().duplicate()
	if undo_redo != null:
		undo_redo.create_action("Set curve parameter %s" % param_name)
		undo_redo.add_do_property(consideration, "curve_params", kept)
		undo_redo.add_undo_property(consideration, "curve_params", before)
		undo_redo.commit_action()
	else:
		consideration.curve_params = kept
	refresh(true)


func _on_param_changed(value: float, param_name: String) -> void:
	set_param(param_name, value)


static func _number(value: float) -> String:
	return String.num(value, 3)


## The plot: the curve, the 0..1 score grid, the test input and its score.
class CurveGraph extends Control:
	var owner_preview: Object

	func _init() -> void:
		custom_minimum_size = Vector2(200, 150)

	func _draw() -> void:
		var font := get_theme_font("font", "Label")
		var font_size := get_theme_font_size("font_size", "Label") - 2
		var area := Rect2(Vector2(34, 6), size - Vector2(42, 26))
		draw_rect(area, Color(0.1, 0.11, 0.13))
		for level in [0.0, 0.25, 0.5, 0.75, 1.0]:
			var y: float = area.end.y - area.size.y * level
			draw_line(Vector2(area.position.x, y), Vector2(area.end.x, y), Color(1, 1, 1, 0.12 if level not in [0.0, 1.0] else 0.3))
			draw_string(font, Vector2(2, y + 4), "%.2f" % level, HORIZONTAL_ALIGNMENT_LEFT, -1, font_size, Color(0.7, 0.7, 0.7))
		var preview: Object = owner_preview
		if preview == null or preview.consideration == null:
			return
		var span: Vector2 = preview.domain()
		draw_string(font, Vector2(area.position.x, area.end.y + 16), preview._number(span.x), HORIZONTAL_ALIGNMENT_LEFT, -1, font_size, Color(0.7, 0.7, 0.7))
		draw_string(font, Vector2(area.end.x - 60, area.end.y + 16), preview._number(span.y), HORIZONTAL_ALIGNMENT_RIGHT, 60, font_size, Color(0.7, 0.7, 0.7))
		var key := String(preview.consideration.input_key)
		draw_string(font, Vector2(area.position.x + area.size.x * 0.5 - 60, area.end.y + 16), key if key != "" else "(input)", HORIZONTAL_ALIGNMENT_CENTER, 120, font_size, Color(0.7, 0.7, 0.7))
		if preview.error != "" or preview.scores.size() != preview.samples.size():
			draw_string(font, area.position + Vector2(8, 20), "invalid curve", HORIZONTAL_ALIGNMENT_LEFT, -1, font_size + 2, Color(1.0, 0.45, 0.4))
			return
		var points := PackedVector2Array()
		for index in preview.samples.size():
			points.append(_at(area, span, preview.samples[index], preview.scores[index]))
		draw_polyline(points, Color(0.35, 0.75, 1.0), 2.0, true)
		var dot: Vector2 = _at(area, span, preview.test_input, preview.test_score)
		draw_line(Vector2(dot.x, area.position.y), Vector2(dot.x, area.end.y), Color(1.0, 0.8, 0.3, 0.5))
		draw_circle(dot, 4.0, Color(1.0, 0.8, 0.3))

	func _at(area: Rect2, span: Vector2, x: float, y: float) -> Vector2:
		var u := (x - span.x) / (span.y - span.x) if span.y > span.x else 0.0
		return Vector2(area.position.x + area.size.x * u, area.end.y - area.size.y * clampf(y, 0.0, 1.0))
