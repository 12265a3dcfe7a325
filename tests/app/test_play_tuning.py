"""Live tuning in ``play`` (gpu_jiggle.app.tuning): every rig value changed without resetting
the motion, saved into the rig's TOML (only the values changed, comments kept), reverted, and
followed when the file changes on disk; undo; colliders picked by clicking; bad edits refused
whole."""
from __future__ import annotations

import difflib
import shutil

import numpy as np
import pytest

from gpu_jiggle.app.play import CharacterPlayer
from gpu_jiggle.app.shared import open_character
from gpu_jiggle.character.rig.reader import load_rig
from gpu_jiggle.render.draw3d import OffscreenTarget

from demo_support import FOX, FOX_RIG


@pytest.fixture
def rig_file(tmp_path):
    path = tmp_path / "fox.toml"
    shutil.copy(FOX_RIG, path)
    return path


@pytest.fixture
def player(gl, rig_file):
    character, rig = open_character(FOX, rig_file)
    p = CharacterPlayer(gl, character, rig, clip="Run")
    for _ in range(5):
        p.step(1 / 30)
    yield p
    p.release()


def changed_lines(before: str, after: str) -> list:
    """The lines removed and added between two texts (no context)."""
    return [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def segments_of(player, name):
    solver, index = player.pipeline.solver_of(name)
    return solver, solver.chain_set.chain_slices()[index]


def test_every_kind_of_rig_value_is_offered_under_its_section(player):
    keys = {p.key for p in player.parameters}
    for group in ("tail", "mane", "ear_tuft_left"):
        for kind in ("frequency", "damping", "air_drag", "gravity", "particle_radius", "world_influence"):
            assert f"{kind}:{group}" in keys
    assert {"wind:heading", "wind:strength", "wind:gust_amplitude", "wind:gust_frequency", "wind:gust_wavelength",
            "collider", "collider:radius", "collider:offset_x"} <= keys
    sections = {p.key: p.section for p in player.parameters}
    assert sections["frequency:tail"] == "tail" and sections["wind:strength"] == "wind"
    clip = next(p for p in player.parameters if p.key == "clip")
    assert clip.kind == "choice" and clip.choices[:3] == ("Survey", "Walk", "Run") and len(clip.choices) == 7
    assert [a.key for a in player.actions] == ["save", "revert", "undo"]
    for p in player.parameters:  # the rig's own values lie within their sliders
        if p.kind == "float":
            assert p.low <= p.value <= p.high, p


def test_save_writes_only_the_value_changed_and_reads_back(player, rig_file):
    before = rig_file.read_text()
    solver, tail = segments_of(player, "tail")
    player.set_parameter("frequency:tail", 3.3)
    assert player.act("save").startswith("saved fox.toml")
    after = rig_file.read_text()
    assert changed_lines(before, after) == ["-frequency = [3.0, 2.5, 2.0]", "+frequency = [3.3, 2.75, 2.2]"]
    back = load_rig(rig_file, player.character.skeleton)
    np.testing.assert_allclose(back.chains[0].frequency, [3.3, 2.75, 2.2], rtol=1e-12)
    same, _ = segments_of(player, "tail")
    assert same is solver, "saving must not rebuild the solver"
    assert player.act("save").startswith("nothing changed")
    assert rig_file.read_text() == after


def test_each_kind_of_value_changes_live_and_is_saved_in_its_table(player, rig_file):
    before = rig_file.read_text()
    solver, mane = segments_of(player, "mane[0]")
    time_before = solver.sim_time
    edits = {"damping:mane": 0.4, "air_drag:tail": 2.0, "gravity:mane": 150.0, "particle_radius:tail": 2.0,
             "world_influence:tail": 0.5, "wind:strength": 300.0, "wind:heading": 90.0}
    for key, value in edits.items():
        player.set_parameter(key, value)
    player.step(1 / 30)
    assert solver.sim_time > time_before, "the motion goes on"
    assert segments_of(player, "mane[0]")[0] is solver
    np.testing.assert_allclose(solver.chain_set.damping_ratio[mane], 0.4)
    np.testing.assert_allclose(solver.chain_set.gravity[player.rig.chains[-1].index], [0.0, -150.0, 0.0])
    wind = player.rig.wind
    assert wind.strength == 300.0 and np.allclose(wind.direction, [1.0, 0.0, 0.0], atol=1e-12)
    player.act("save")
    diff = changed_lines(before, rig_file.read_text())
    for line in ("+damping_ratio = 0.4", "+gravity = [0.0, -150.0, 0.0]", "+air_drag = 2.0", "+particle_radius = 2.0",
                 "+world_influence = 0.5", "+[wind]", "+strength = 300.0"):
        assert line in diff, (line, diff)
    assert sum(line.startswith("-") for line in diff) == 5, diff  # the five values replaced, the wind added
    back = load_rig(rig_file, player.character.skeleton)
    assert back.wind.strength == 300.0
    np.testing.assert_allclose(back.chain_set.damping_ratio, player.rig.chain_set.damping_ratio, rtol=1e-6)


def test_the_file_changed_on_disk_is_followed_live(player, rig_file):
    solver, mane = segments_of(player, "mane[0]")
    text = rig_file.read_text().replace("damping_ratio = 0.25\n", "damping_ratio = 0.45\n", 1)
    rig_file.write_text(text)
    player.step(1 / 30)
    np.testing.assert_allclose(solver.chain_set.damping_ratio[mane], 0.45)
    assert segments_of(player, "mane[0]")[0] is solver, "reloading must not reset the motion"
    assert next(p for p in player.parameters if p.key == "damping:mane").value == pytest.approx(0.45)
    assert any("changed on disk" in line for line in player.status())
    rig_file.write_text(text.replace("damping_ratio = 0.45", "damping_ratio = -1.0"))  # mid-edit, broken
    player.step(1 / 30)
    np.testing.assert_allclose(solver.chain_set.damping_ratio[mane], 0.45)  # kept
    assert any("does not read" in line and "damping_ratio" in line for line in player.status())


def test_undo_and_revert(player, rig_file):
    solver, tail = segments_of(player, "tail")
    original = solver.chain_set.frequency[tail].copy()
    player.set_parameter("frequency:tail", 3.3)
    player.set_parameter("frequency:tail", 3.6)   # one drag: one edit
    player.set_parameter("damping:tail", 0.6)
    player.act("undo")
    np.testing.assert_allclose(solver.chain_set.damping_ratio[tail], [0.3, 0.25, 0.2])
    np.testing.assert_allclose(solver.chain_set.frequency[tail], original * 1.2)
    player.act("undo")
    np.testing.assert_allclose(solver.chain_set.frequency[tail], original)
    assert next(p for p in player.parameters if p.key == "frequency:tail").value == pytest.approx(3.0)
    with pytest.raises(ValueError, match="nothing to undo"):
        player.act("undo")
    player.set_parameter("wind:strength", 500.0)
    player.set_parameter("air_drag:tail", 4.0)
    assert player.act("revert") == "reverted to fox.toml"
    np.testing.assert_allclose(solver.chain_set.air_drag[tail], 1.0)
    assert player.rig.wind is None
    assert segments_of(player, "tail")[0] is solver


def test_undo_after_a_save_goes_back_to_the_saved_value_not_past_it(player, rig_file):
    """Edits of one value merge into one undo step (a drag), but not across a Save: the edit
    after it is undone to what the file now holds."""
    player.set_parameter("frequency:tail", 3.3)
    player.set_parameter("frequency:tail", 3.6)
    player.act("save")
    player.set_parameter("frequency:tail", 4.2)
    player.set_parameter("frequency:tail", 4.8)
    assert player.act("undo") == "undid tail f (Hz) = 3.6"
    assert next(p for p in player.parameters if p.key == "frequency:tail").value == pytest.approx(3.6)
    player.act("undo")  # and the step before the save
    assert next(p for p in player.parameters if p.key == "frequency:tail").value == pytest.approx(3.0)


def test_a_collider_is_picked_by_clicking_and_edited(player, gl, rig_file):
    with OffscreenTarget(gl, (320, 180), samples=0) as target:
        player.draw(target.framebuffer, debug=True)
    shapes = player.frame.colliders
    head = shapes.spheres[shapes.sphere_names.index("head")]
    clip = player.camera.view_projection(player.aspect) @ np.append(head[:3], 1.0)
    x, y = (clip[0] / clip[3] + 1) / 2, (1 - clip[1] / clip[3]) / 2
    player.click(x, y)
    assert player.tuning.selected_collider == "head"
    radius = next(p for p in player.parameters if p.key == "collider:radius")
    assert radius.value == pytest.approx(11.0)
    player.set_parameter("collider:radius", 8.0)
    player.set_parameter("collider:offset_y", 3.0)
    player.step(1 / 30)
    assert player.frame.colliders.spheres[shapes.sphere_names.index("head")][3] == pytest.approx(8.0, rel=1e-3)
    before = rig_file.read_text()
    player.act("save")
    assert changed_lines(before, rig_file.read_text()) == [
        "-offset = [14.0, 2.0, 0.0]", "-radius = 11.0", "+offset = [14.0, 3.0, 0.0]", "+radius = 8.0"]
    player.click(0.0, 0.0)   # nothing there: the pick stays
    assert player.tuning.selected_collider == "head"


def test_bad_edits_are_refused_whole(player, rig_file):
    solver, tail = segments_of(player, "tail")
    before = solver.chain_set.frequency.copy()
    with pytest.raises(ValueError, match=r"tail: frequency\[0\] = 40.0 Hz .*unstable"):
        player.set_parameter("frequency:tail", 40.0)
    np.testing.assert_array_equal(solver.chain_set.frequency, before)
    with pytest.raises(ValueError, match="gust_amplitude = 50.0 with strength = 0"):
        player.set_parameter("wind:gust_amplitude", 50.0)
    assert player.rig.wind is None
    with pytest.raises(ValueError, match="radius = -1.0"):
        player.set_parameter("collider:radius", -1.0)
    text = rig_file.read_text()
    player.act("save")
    assert rig_file.read_text() == text, "refused edits leave nothing to save"


def test_a_rig_without_its_own_toml_is_tuned_but_not_saved(gl):
    from gpu_jiggle.app.viewer.session import Session
    from types import SimpleNamespace

    vrm = FOX.parents[1] / "vrm" / "Godette_vrm_v4.vrm"
    if not vrm.is_file():
        pytest.skip("no bundled VRM")
    character, rig = open_character(vrm, None)
    session = Session(gl, lambda ctx, _a: CharacterPlayer(ctx, character, rig, motion="idle"),
                      SimpleNamespace(fps_cap=None, debug=False))
    try:
        save = next(a for a in session.demo.actions if a.key == "save")
        assert not session.act(save)
        assert "gpu-jiggle rig MODEL --out RIG.toml" in session.current_message()
    finally:
        session.release()


WINDOW_SCRIPT = '''
import json, os, sys
from types import SimpleNamespace
from gpu_jiggle.app.play import CharacterPlayer
from gpu_jiggle.app.shared import open_character
from gpu_jiggle.app.viewer.window import open_window, run_window

fox, rig_path, out = sys.argv[1:4]
character, rig = open_character(fox, rig_path)
LAST_FRAME = 600  # a failure guard: the player reads a changed file at its next frame
seen = {}
edited = []  # the rig as the player had read it before the file was edited

def each_frame(session):
    # one step a frame, each when the one before it is done; the last waits for the player to
    # have read the edited file again, however many frames that takes
    demo = session.demo
    by_key = {p.key: p for p in demo.parameters}
    if "set" not in seen:  # what the panel's slider calls
        seen["set"] = session.set(by_key["frequency:tail"], 3.3)
    elif "saved" not in seen:  # the Save button
        seen["saved"] = session.act(next(a for a in demo.actions if a.key == "save"))
        seen["message"] = session.current_message()
    elif not edited:  # another editor changes the file
        saved = os.stat(rig_path)
        edited.append(demo.tuning.loaded)
        text = open(rig_path).read()
        open(rig_path, "w").write(text.replace("damping_ratio = 0.25\\n", "damping_ratio = 0.45\\n", 1))
        # later than the save, whatever the clock's grain: the size is the same, so only the
        # time tells the two apart
        os.utime(rig_path, ns=(saved.st_atime_ns, saved.st_mtime_ns + 1_000_000_000))
    elif demo.tuning.loaded is not edited[0]:  # the player has read it again: what the panel and the solver have now
        solver, index = demo.pipeline.solver_of("mane[0]")
        seen["panel_damping"] = by_key["damping:mane"].value
        seen["solver_damping"] = float(solver.chain_set.damping_ratio[solver.chain_set.chain_slices()[index]][0])
        session.quit = True

window, reason = open_window("tuning", (640, 360))
assert window is not None, reason
args = SimpleNamespace(fps_cap=None, samples=None, no_panel=False, frames=LAST_FRAME, screenshot=None,
                       screenshot_frames=[], debug=False, size=(640, 360), each_frame=each_frame)
rc = run_window(lambda ctx, _a: CharacterPlayer(ctx, character, rig, "Run"), args, window, reason)
json.dump(seen, open(out, "w"))
if "solver_damping" not in seen:
    sys.exit(f"the edited file was not read again in {LAST_FRAME} frames: {seen}")
sys.exit(rc)
'''


def test_in_a_real_window_a_slider_is_saved_and_the_file_followed(tmp_path, rig_file):
    import json

    from demo_support import run_window

    script = tmp_path / "drive.py"
    script.write_text(WINDOW_SCRIPT)
    before = rig_file.read_text()
    run_window([script, FOX, rig_file, tmp_path / "seen.json"], tmp_path, frames=None)
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert seen["set"] and seen["saved"] and seen["message"].startswith("saved fox.toml"), seen
    diff = changed_lines(before, rig_file.read_text())
    assert diff == ["-frequency = [3.0, 2.5, 2.0]", "+frequency = [3.3, 2.75, 2.2]",
                    "-damping_ratio = 0.25", "+damping_ratio = 0.45"], diff
    assert seen["panel_damping"] == pytest.approx(0.45) and seen["solver_damping"] == pytest.approx(0.45), seen


def test_hinge_and_cone_limits_change_live_and_are_saved_as_rows(gl, rig_file):
    text = rig_file.read_text().replace("air_drag = 1.0\n", "air_drag = 1.0\nhinge_limit_deg = [-30.0, 45.0]\n", 1)
    text = text.replace("frequency = 10.0\n", "frequency = 10.0\nangle_limit_deg = 40.0\n", 1)  # the mane
    rig_file.write_text(text)
    character, rig = open_character(FOX, rig_file)
    player = CharacterPlayer(gl, character, rig, clip="Run")
    try:
        player.step(1 / 30)
        keys = {p.key for p in player.parameters}
        assert {"hinge_least:tail", "hinge_greatest:tail", "angle_limit:mane"} <= keys
        assert "hinge_least:mane" not in keys and "angle_limit:tail" not in keys  # no such limit there
        solver, tail = segments_of(player, "tail")
        player.set_parameter("hinge_greatest:tail", 60.0)
        player.set_parameter("angle_limit:mane", 35.0)
        np.testing.assert_allclose(np.degrees(solver.chain_set.hinge_limit[tail]), [[-30.0, 60.0]] * 3)
        with pytest.raises(ValueError, match="hinge"):
            player.set_parameter("hinge_least:tail", 90.0)   # least above greatest
        np.testing.assert_allclose(np.degrees(solver.chain_set.hinge_limit[tail]), [[-30.0, 60.0]] * 3)
        player.act("save")
        assert changed_lines(text, rig_file.read_text()) == [
            "-hinge_limit_deg = [-30.0, 45.0]", "+hinge_limit_deg = [-30.0, 60.0]",
            "-angle_limit_deg = 40.0", "+angle_limit_deg = 35.0"]
    finally:
        player.release()


def test_without_a_rig_the_status_says_there_are_no_springs(gl):
    character, rig = open_character(FOX, None)
    player = CharacterPlayer(gl, character, rig, clip="Run")
    try:
        player.step(1 / 30)
        assert any("no springs (no rig)" in line for line in player.status())
        assert player.tuning is None and player.actions == []
        with pytest.raises(ValueError, match="no rig is being tuned"):
            player.act("save")
    finally:
        player.release()


def test_a_curve_is_saved_as_a_curve_on_its_own_line(gl, rig_file):
    text = rig_file.read_text().replace("frequency = [3.0, 2.5, 2.0]", "frequency = { root = 3.0, tip = 2.0 }", 1)
    rig_file.write_text(text)
    character, rig = open_character(FOX, rig_file)
    player = CharacterPlayer(gl, character, rig, clip="Run")
    try:
        player.set_parameter("frequency:tail", 4.5)
        assert player.act("save") == "saved fox.toml (1 line written)"
        assert changed_lines(text, rig_file.read_text()) == ["-frequency = { root = 3.0, tip = 2.0 }",
                                                             "+frequency = {root = 4.5, tip = 3.0}"]
    finally:
        player.release()


def test_undone_edits_and_a_still_wind_leave_nothing_to_save(player, rig_file):
    text = rig_file.read_text()
    player.set_parameter("wind:strength", 100.0)
    player.set_parameter("frequency:tail", 3.5)
    player.act("undo")
    player.act("undo")
    assert player.act("save") == "nothing changed: fox.toml kept"
    assert rig_file.read_text() == text
    player.set_parameter("wind:strength", 100.0)
    player.set_parameter("wind:heading", 90.0)
    player.act("save")
    assert "+direction = [1.0, 0.0, 0.0]" in changed_lines(text, rig_file.read_text())


def test_a_capsule_moves_whole_and_non_finite_values_are_refused(player, rig_file):
    names = [c.name for c in player.rig.colliders]
    capsule = next(c for c in player.rig.colliders if c.shape == "capsule")
    player.set_parameter("collider", names.index(capsule.name))
    length = np.linalg.norm(capsule.end - capsule.offset)
    player.set_parameter("collider:offset_x", float(capsule.offset[0]) + 2.0)
    moved = player.rig.colliders[names.index(capsule.name)]
    np.testing.assert_allclose(moved.end - moved.offset, capsule.end - capsule.offset)
    assert np.linalg.norm(moved.end - moved.offset) == pytest.approx(length)
    for bad in (float("inf"), float("nan")):
        with pytest.raises(ValueError, match=f"collider {capsule.name!r}: radius"):
            player.pipeline.set_collider(capsule.name, radius=bad)
    with pytest.raises(ValueError, match="offset"):
        player.pipeline.set_collider(capsule.name, offset=[0.0, float("nan"), 0.0])
    assert player.rig.colliders[names.index(capsule.name)] is moved


def test_save_keeps_the_rigs_mode_and_owner_and_refuses_a_hard_linked_rig(player, rig_file):
    import os

    from gpu_jiggle.whole_files import WholeWriteError

    rig_file.chmod(0o600)
    owner = (65534, 65534) if os.geteuid() == 0 else (os.getuid(), os.getgid())
    os.chown(rig_file, *owner)
    player.set_parameter("frequency:tail", 3.3)
    assert player.act("save").startswith("saved fox.toml")
    st = rig_file.stat()
    assert (st.st_mode & 0o7777, st.st_uid, st.st_gid) == (0o600, *owner), "readable by no one else, still theirs"
    saved = rig_file.read_text()
    os.link(rig_file, rig_file.with_name("also.toml"))
    player.set_parameter("frequency:tail", 3.6)
    with pytest.raises(WholeWriteError, match="has 2 hard links"):
        player.act("save")
    assert rig_file.read_text() == saved and rig_file.with_name("also.toml").read_text() == saved
