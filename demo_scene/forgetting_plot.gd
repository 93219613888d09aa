extends RefCounted
## The forgetting plot: R over time for every memory the guards held, one line per
## (guard, entity, type), readable without the README: a time axis in seconds and an R axis with
## tick labels, a legend naming each line's guard, entity and memory type, the awareness
## thresholds labelled (0.8 pursue, 0.3 search, 0.05 forgotten) and the story moments marked
## (theft, stone, grenade, a recall of a hostile memory).
## Drawn into an Image so it works headless, with no renderer: the text is the engine's fallback
## font, rasterised by the TextServer into its glyph atlas and copied pixel by pixel.

const SIZE := Vector2i(1300, 600)
const PLOT := Rect2(70, 70, 840, 450)  # the axes' box; threshold labels, then the legend, to its right
const FONT_SIZE := 13
const GREY := Color(0.55, 0.55, 0.55)
const LIGHT := Color(0.86, 0.86, 0.86)
const INK := Color(0.1, 0.1, 0.1)
# One colour per line, in order of first appearance; a type's lines keep a family look by order only.
const PALETTE := [
	Color(0.85, 0.2, 0.15), Color(0.2, 0.45, 0.85), Color(0.15, 0.6, 0.3), Color(0.55, 0.15, 0.75),
	Color(0.9, 0.55, 0.1), Color(0.1, 0.65, 0.7), Color(0.75, 0.35, 0.55), Color(0.45, 0.45, 0.2),
	Color(0.3, 0.3, 0.3), Color(0.6, 0.4, 0.2),
]
const THRESHOLDS := [[0.8, "pursue (R 0.8)"], [0.3, "search (R 0.3)"], [0.05, "forgotten (R 0.05)"]]
# Timeline events marked as story moments: event name -> label.
const MOMENTS := {"theft": "theft", "stone_landed": "stone", "grenade_exploded": "grenade"}


static func draw(timeline: Array[Dictionary]) -> Image:
	var image := Image.create(SIZE.x, SIZE.y, false, Image.FORMAT_RGB8)
	image.fill(Color.WHITE)
	var series := {}  # "guard/entity/type" -> Array[Vector2(t, R)], in order of first appearance
	var moments: Array = []  # [t, label]
	var end_t := 1.0
	for line in timeline:
		end_t = maxf(end_t, line.t)
		var event: String = line.get("event", "")
		if MOMENTS.has(event):
			var who: String = line.get("who", line.get("thief", ""))
			moments.append([line.t, "%s (%s)" % [MOMENTS[event], who] if who else MOMENTS[event]])
		elif event == "recall" and line.get("type") in ["hostile", "trauma"]:
			moments.append([line.t, "%s recalls %s" % [line.guard, line.entity]])
		if event != "sample" or line.entity == null:
			continue
		var key := "%s/%s/%s" % [line.guard, line.entity, line.type]
		if not series.has(key):
			series[key] = []
		series[key].append(Vector2(line.t, line.R))
	end_t = ceilf(end_t / 10.0) * 10.0
	_axes(image, end_t)
	# Moment labels sit in a band above the axes, on the row below when the one above is taken there.
	var row_ends := [-1000.0, -1000.0]
	for moment: Array in moments:
		var x := _to_pixel(end_t, Vector2(moment[0], 0)).x
		_dashed_vertical(image, x, int(PLOT.position.y) - 28, int(PLOT.end.y), GREY)
		var label_row := 0 if x > row_ends[0] else 1
		_text(image, Vector2(x + 3, PLOT.position.y - 18 + 14 * label_row), moment[1], INK)
		row_ends[label_row] = x + 8.0 * moment[1].length()
	var legend_x := PLOT.end.x + 140
	var legend_y := PLOT.position.y + 4.0
	_text(image, Vector2(legend_x, legend_y), "guard: entity (memory type)", INK)
	var index := 0
	for key: String in series:
		var colour: Color = PALETTE[index % PALETTE.size()]
		var points: Array = series[key]
		for point in range(1, points.size()):
			if points[point].x - points[point - 1].x > 1.5:
				continue  # a gap: the memory was gone in between
			_line(image, _to_pixel(end_t, points[point - 1]), _to_pixel(end_t, points[point]), colour)
		legend_y += 20.0
		var row := Vector2i(int(legend_x), int(legend_y) - 5)
		_line(image, row, row + Vector2i(22, 0), colour)
		var parts := key.split("/")
		_text(image, Vector2(row.x + 28, legend_y), "%s: %s (%s)" % [parts[0], parts[1], parts[2]], INK)
		index += 1
	return image


static func _axes(image: Image, end_t: float) -> void:
	for threshold: Array in THRESHOLDS:
		var y := _to_pixel(end_t, Vector2(0, threshold[0])).y
		_line(image, Vector2i(int(PLOT.position.x), y), Vector2i(int(PLOT.end.x), y), LIGHT)
		_text(image, Vector2(PLOT.end.x + 6, y + 4), threshold[1], GREY)
	var origin := _to_pixel(end_t, Vector2.ZERO)
	_line(image, origin, _to_pixel(end_t, Vector2(end_t, 0)), INK)
	_line(image, origin, _to_pixel(end_t, Vector2(0, 1)), INK)
	for tick in range(0, 11, 2):
		var r := tick / 10.0
		var y := _to_pixel(end_t, Vector2(0, r)).y
		_line(image, Vector2i(origin.x - 5, y), Vector2i(origin.x, y), INK)
		_text(image, Vector2(origin.x - 34, y + 5), "%.1f" % r, INK)
	var step := 10.0 if end_t <= 150.0 else 30.0
	var t := 0.0
	while t <= end_t:
		var x := _to_pixel(end_t, Vector2(t, 0)).x
		_line(image, Vector2i(x, origin.y), Vector2i(x, origin.y + 5), INK)
		_text(image, Vector2(x - 8, origin.y + 20), "%d" % int(t), INK)
		t += step
	_text(image, Vector2(PLOT.position.x + PLOT.size.x / 2 - 40, origin.y + 42), "time (s)", INK)
	_text(image, Vector2(8, PLOT.position.y + PLOT.size.y / 2), "R", INK)
	_text(image, Vector2(PLOT.position.x, 20), "Retrievability R = e^(-t/S) of each memory the guards held", INK)


static func _to_pixel(end_t: float, point: Vector2) -> Vector2i:
	return Vector2i(int(PLOT.position.x + PLOT.size.x * point.x / end_t), int(PLOT.end.y - PLOT.size.y * point.y))


static func _line(image: Image, from: Vector2i, to: Vector2i, colour: Color) -> void:
	var steps := maxi(absi(to.x - from.x), absi(to.y - from.y)) + 1
	for index in steps + 1:
		var at := Vector2(from).lerp(Vector2(to), float(index) / steps)
		for offset: Vector2i in [Vector2i.ZERO, Vector2i(0, 1), Vector2i(1, 0)]:
			_blend(image, Vector2i(at.round()) + offset, colour, 1.0)


static func _dashed_vertical(image: Image, x: int, top: int, bottom: int, colour: Color) -> void:
	for y in range(top, bottom):
		if (y / 4) % 2 == 0:
			_blend(image, Vector2i(x, y), colour, 1.0)


static func _blend(image: Image, pixel: Vector2i, colour: Color, alpha: float) -> void:
	if pixel.x >= 0 and pixel.y >= 0 and pixel.x < SIZE.x and pixel.y < SIZE.y:
		image.set_pixelv(pixel, image.get_pixelv(pixel).lerp(colour, alpha))


## Text with its baseline at `at`, glyph by glyph from the fallback font's rasterised atlas.
static func _text(image: Image, at: Vector2, text: String, colour: Color) -> void:
	var server := TextServerManager.get_primary_interface()
	var font: RID = ThemeDB.fallback_font.get_rids()[0]
	var size := Vector2i(FONT_SIZE, 0)
	var pen := at
	var atlases := {}
	for character in text:
		var glyph := server.font_get_glyph_index(font, FONT_SIZE, character.unicode_at(0), 0)
		server.font_render_glyph(font, size, glyph)
		var atlas_index := server.font_get_glyph_texture_idx(font, size, glyph)
		if atlas_index >= 0:
			if not atlases.has(atlas_index):
				atlases[atlas_index] = server.font_get_texture_image(font, size, atlas_index)
			var atlas: Image = atlases[atlas_index]
			var source := Rect2i(server.font_get_glyph_uv_rect(font, size, glyph))
			var corner := Vector2i((pen + server.font_get_glyph_offset(font, size, glyph)).round())
			for y in source.size.y:
				for x in source.size.x:
					var coverage := atlas.get_pixel(source.position.x + x, source.position.y + y).a
					if coverage > 0.0:
						_blend(image, corner + Vector2i(x, y), colour, coverage)
		pen.x += server.font_get_glyph_advance(font, FONT_SIZE, glyph).x
