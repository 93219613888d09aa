@tool
extends VBoxContainer
## What the inspector previews share: the resource they follow live (its values polled a few times
## a second; `refresh(false)` redraws only when they changed) and a labelled slider row.

## Seconds between two polls of the bound resource.
var poll_seconds := 0.2

var _bound: Object
var _since_poll := 0.0


## Follow `target` and draw it now.
func bind(target: Object) -> void:
	_bound = target
	refresh(true)


func _process(delta: float) -> void:
	_since_poll += delta
	if _since_poll >= poll_seconds and is_instance_valid(_bound):
		_since_poll = 0.0
		refresh(false)


## Redraw from the bound resource; `force` false: only when its values changed since the last draw.
func refresh(_force: bool) -> void:
	pass


## A row with a label and a slider that fills the rest of it (both with `tooltip`), added last.
func add_slider_row(text: String, tooltip: String) -> HSlider:
	var row := HBoxContainer.new()
	var label := Label.new()
	label.text = text
	label.tooltip_text = tooltip
	label.mouse_filter = Control.MOUSE_FILTER_PASS
	row.add_child(label)
	var slider := HSlider.new()
	slider.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	slider.size_flags_vertical = Control.SIZE_SHRINK_CENTER
	slider.tooltip_text = tooltip
	row.add_child(slider)
	add_child(row)
	return slider
