extends RefCounted
## The forgetting plot: R over time for every memory the guards held, one line per
## (guard, entity, type), with the awareness thresholds (0.8 pursue, 0.3 search, 0.05 forgotten).
## Drawn into an Image so it works headless, with no renderer.

const SIZE := Vector2i(960, 420)
const MARGIN := 30
const TYPE_COLOURS := [Color(0.55, 0.55, 0.55), Color(0.2, 0.5, 0.9), Color(0.3, 0.7, 0.3), Color(0.85, 0.2, 0.15), Color(0.55, 0.15, 0.75)]
const TYPE_NAMES := ["trivia", "observation", "interaction", "hostile", "trauma"]


static func draw(timeline: Array[Dictionary]) -> Image:
	var image := Image.create(SIZE.x, SIZE.y, false, Image.FORMAT_RGB8)
	image.fill(Color.WHITE)
	var series := {}
	var end_t := 1.0
	for line in timeline:
		end_t = maxf(end_t, line.t)
		if line.get("event") != "sample" or line.entity == null:
			continue
		var key := "%s/%s/%s" % [line.guard, line.entity, line.type]
		if not series.has(key):
			series[key] = []
		series[key].append(Vector2(line.t, line.R))
	var area := Rect2(MARGIN, MARGIN, SIZE.x - 2 * MARGIN, SIZE.y - 2 * MARGIN)
	for threshold: float in [0.8, 0.3, 0.05]:
		_line(image, _to_pixel(area, end_t, Vector2(0, threshold)), _to_pixel(area, end_t, Vector2(end_t, threshold)), Color(0.85, 0.85, 0.85))
	_line(image, _to_pixel(area, end_t, Vector2(0, 0)), _to_pixel(area, end_t, Vector2(end_t, 0)), Color.BLACK)
	_line(image, _to_pixel(area, end_t, Vector2(0, 0)), _to_pixel(area, end_t, Vector2(0, 1)), Color.BLACK)
	for key: String in series:
		var colour: Color = TYPE_COLOURS[TYPE_NAMES.find(key.get_slice("/", 2))]
		var points: Array = series[key]
		for index in range(1, points.size()):
			if points[index].x - points[index - 1].x > 1.5:
				continue  # a gap: the memory was gone in between
			_line(image, _to_pixel(area, end_t, points[index - 1]), _to_pixel(area, end_t, points[index]), colour)
	return image


static func _to_pixel(area: Rect2, end_t: float, point: Vector2) -> Vector2i:
	return Vector2i(int(area.position.x + area.size.x * point.x / end_t), int(area.end.y - area.size.y * point.y))


static func _line(image: Image, from: Vector2i, to: Vector2i, colour: Color) -> void:
	var steps := maxi(absi(to.x - from.x), absi(to.y - from.y)) + 1
	for index in steps + 1:
		var at := Vector2(from).lerp(Vector2(to), float(index) / steps)
		for offset: Vector2i in [Vector2i.ZERO, Vector2i(0, 1), Vector2i(1, 0)]:
			var pixel := Vector2i(at.round()) + offset
			if pixel.x >= 0 and pixel.y >= 0 and pixel.x < SIZE.x and pixel.y < SIZE.y:
				image.set_pixelv(pixel, colour)
