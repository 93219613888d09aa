extends Node3D
## The 3D room (the game's side, not the mind): its navigation mesh is baked from the room's
## colliders at start, so walls and pillars can be moved in the editor. The guard and its mind are
## nodes and resources only (see room3d.tscn); the thief is scripted (thief.gd).
## Arguments after `--`:
##   --story               check the story (demo_scene/room3d/story.gd), print it as JSON lines, quit
##   --screenshot=PATH     save one rendered frame at --screenshot-at seconds (default 6), then quit
##   --screenshots=DIR     save a frame every --every seconds (default 3) into DIR, quit at --until

const Story := preload("res://demo_scene/room3d/story.gd")

var _time := 0.0
var _shot_path := ""
var _shot_at := 6.0
var _shots_dir := ""
var _every := 3.0
var _until := 36.0
var _next_shot := 0.0


func _ready() -> void:
	$Navigation.bake_navigation_mesh(false)
	for argument in OS.get_cmdline_user_args():
		if argument == "--story":
			add_child(Story.new())
		elif argument.begins_with("--screenshot="):
			_shot_path = argument.trim_prefix("--screenshot=")
		elif argument.begins_with("--screenshot-at="):
			_shot_at = argument.trim_prefix("--screenshot-at=").to_float()
		elif argument.begins_with("--screenshots="):
			_shots_dir = argument.trim_prefix("--screenshots=")
		elif argument.begins_with("--every="):
			_every = argument.trim_prefix("--every=").to_float()
		elif argument.begins_with("--until="):
			_until = argument.trim_prefix("--until=").to_float()


func _process(delta: float) -> void:
	_time += delta
	if _shot_path != "" and _time >= _shot_at:
		var path := _shot_path
		_shot_path = ""
		await _save(path)
		get_tree().quit()
	elif _shots_dir != "" and _time >= _next_shot:
		_next_shot += _every
		var done := _time >= _until
		await _save("%s/room3d_%04.1f.png" % [_shots_dir, _time])
		if done:
			get_tree().quit()


func _save(path: String) -> void:
	if DisplayServer.get_name() == "headless":
		push_error("a screenshot needs a display (run under xvfb-run), not --headless")
		return
	await RenderingServer.frame_post_draw
	get_viewport().get_texture().get_image().save_png(path)
