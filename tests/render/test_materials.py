"""The character renderer's pixels: morph targets on the GPU, alpha modes (MASK, BLEND), vertex
colours, unlit materials, the texture transform and single-sided culling, each on a tiny glTF
file built here (or a Khronos sample) and drawn from the front. Every image is saved as a PNG
in the test's folder."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from gpu_jiggle.app.render import render
from gpu_jiggle.character.gltf.loader import Character
from gpu_jiggle.character.gltf.morph import posed_positions
from gpu_jiggle.character.pipeline import Pipeline

from demo_support import rgb
from gltf_scenes import UBYTE, Scene, covered, draw, unlit

KHRONOS = Path(__file__).resolve().parents[1] / "data" / "khronos"
SIMPLE_MORPH = KHRONOS / "SimpleMorph" / "glTF-Embedded" / "SimpleMorph.gltf"
MORPH_CUBE = KHRONOS / "AnimatedMorphCube" / "glTF-Binary" / "AnimatedMorphCube.glb"
RED, GREEN, BLUE = (1.0, 0.0, 0.0, 1.0), (0.0, 1.0, 0.0, 1.0), (0.0, 0.0, 1.0, 1.0)


def close(pixel, expected, tolerance=3) -> bool:
    return bool(np.all(np.abs(np.asarray(pixel, int) - np.asarray(expected, int)) <= tolerance))


# -- morph targets --------------------------------------------------------------------------------
@pytest.mark.parametrize("weights", [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (0.5, 0.5), (1.0, 1.0)])
def test_simple_morph_draws_where_the_targets_move_the_triangle(gl, tmp_path, weights):
    """SimpleMorph's triangle drawn with morph weights covers the pixels of the triangle the
    host morphs with the same weights (glTF 2.0 section 3.7.2.2)."""
    character = Character.load(SIMPLE_MORPH)
    mesh = character.meshes[0]
    pixels = draw(gl, character, weights={mesh.node: weights}, save=tmp_path / "morph.png")
    drawn = pixels.max(axis=-1) > 0
    world = character.skeleton.world_matrices(character.skeleton.rest_pose())
    expected = covered(posed_positions(character, mesh, world, weights))
    assert expected.sum() > 100
    assert (drawn != expected).sum() <= 0.06 * expected.sum(), "only pixels on the edges may differ"


def test_simple_morph_weights_0_and_1_differ_where_the_morph_moves_vertices(gl, tmp_path):
    character = Character.load(SIMPLE_MORPH)
    node = character.meshes[0].node
    zero = draw(gl, character, weights={node: (0.0, 0.0)}, save=tmp_path / "weights_0.png").max(axis=-1) > 0
    one = draw(gl, character, weights={node: (1.0, 1.0)}, save=tmp_path / "weights_1.png").max(axis=-1) > 0
    default = draw(gl, character).max(axis=-1) > 0  # the mesh's weights, 0.5 and 0.5
    world = character.skeleton.world_matrices(character.skeleton.rest_pose())
    moved = covered(posed_positions(character, character.meshes[0], world, (0, 0))) != \
        covered(posed_positions(character, character.meshes[0], world, (1, 1)))
    changed = zero != one
    assert changed.sum() > 300
    assert (changed & ~moved).sum() <= 0.05 * changed.sum(), "the pictures differ where the vertices moved"
    assert (default != zero).sum() > 100 and (default != one).sum() > 100


def test_animated_morph_cube_changes_shape_in_a_short_render(gl, tmp_path):
    """AnimatedMorphCube's weights channel (LINEAR) reshapes the cube as it plays: a command
    line render without a rig or --animation plays its clip, and its frames differ."""
    out = tmp_path / "cube"
    result = render(MORPH_CUBE, None, None, out, seconds=4.0, fps=1.0, size=(160, 120), samples=0, progress=False)
    assert result.clip == "Square" and result.frames == 4 and result.backend is None
    frames = [rgb(p) for p in sorted(out.glob("frame_*.png"))]
    sky = frames[0][2, 2].astype(int)
    areas = [int((np.abs(f.astype(int) - sky).sum(axis=-1) > 0).sum()) for f in frames]
    assert max(np.any(frames[0] != f, axis=-1).sum() for f in frames[1:]) > 1500, areas


def test_frames_carry_the_animated_weights(tmp_path):
    """The pipeline samples SimpleMorph's weights channel (LINEAR between keys) into each frame."""
    character = Character.load(SIMPLE_MORPH)
    clip = character.clips[0]
    channel = next(c for c in clip.channels if c.path == "weights")
    with Pipeline(character, None, clip) as pipeline:
        for t in (0.0, 0.5, 1.25, 3.9):
            frame = pipeline.step(t, 0.1)
            np.testing.assert_allclose(frame.morph_weights[0], channel.sampler.sample(clip.local_time(t)))
    with Pipeline(character, None, None) as still:
        np.testing.assert_allclose(still.step(0.0, 0.1).morph_weights[0], [0.5, 0.5])  # the mesh's weights


# -- alpha modes ----------------------------------------------------------------------------------
def _checker(alpha_on: int) -> np.ndarray:
    """(8, 8, 4) white, alpha ``alpha_on`` on the even cells and 0 on the odd ones."""
    rows, cols = np.indices((8, 8))
    out = np.full((8, 8, 4), 255, np.uint8)
    out[..., 3] = np.where((rows + cols) % 2 == 0, alpha_on, 0)
    return out


@pytest.mark.parametrize("mode, cutoff, drawn", [("OPAQUE", None, (0.95, 1.0)), ("MASK", None, (0.4, 0.6)),
                                                  ("MASK", 0.9, (0.0, 0.01))])
def test_mask_leaves_holes_where_alpha_is_below_the_cutoff(gl, tmp_path, mode, cutoff, drawn):
    """A checkered alpha texture (alpha 200/255 and 0): OPAQUE ignores it, MASK (cutoff 0.5 by
    default) leaves the alpha-0 cells out, a cutoff of 0.9 leaves every cell out."""
    scene = Scene()
    fields = unlit(RED, alphaMode=mode)
    fields["pbrMetallicRoughness"]["baseColorTexture"] = {"index": scene.texture(_checker(200))}
    if cutoff is not None:
        fields["alphaCutoff"] = cutoff
    scene.quad(material=scene.material(**fields))
    pixels = draw(gl, scene.save(tmp_path / "mask.gltf"), save=tmp_path / f"{mode}_{cutoff}.png")
    inside = pixels[12:52, 12:52]  # within the quad (it spans about pixels 8..56)
    red = (inside[..., 0] > 200) & (inside[..., 1] < 30)
    black = inside.max(axis=-1) < 30
    assert np.all(red | black)
    assert drawn[0] <= red.mean() <= drawn[1], red.mean()
    if mode == "MASK" and cutoff is None:  # neighbouring cells alternate
        assert red[3, 3] != red[3, 9] and red[3, 3] == red[9, 9]


def test_blend_shows_the_geometry_behind_it(gl, tmp_path):
    """A BLEND quad of alpha 0.5 listed before the opaque quad behind it still blends over it:
    opaque primitives are drawn first (glTF 2.0 section 3.9.4)."""
    scene = Scene()
    scene.quad(half=0.4, z=0.0, material=scene.material(**unlit((1.0, 0.0, 0.0, 0.5), alphaMode="BLEND")))
    scene.quad(half=0.8, z=-0.5, material=scene.material(**unlit(BLUE)))
    pixels = draw(gl, scene.save(tmp_path / "blend.gltf"), save=tmp_path / "blend.png")
    assert close(pixels[32, 32], (128, 0, 128)), pixels[32, 32]
    assert close(pixels[32, 14], (0, 0, 255)), "only the opaque quad out there"


def test_blended_primitives_are_sorted_back_to_front(gl, tmp_path):
    """Two BLEND quads of alpha 0.5, the near green one listed first: drawn far to near, the
    centre is half green over half red over black, (64, 128, 0); in file order it would be
    (128, 64, 0)."""
    scene = Scene()
    scene.quad(half=0.5, z=0.5, material=scene.material(**unlit((0.0, 1.0, 0.0, 0.5), alphaMode="BLEND")))
    scene.quad(half=0.7, z=0.0, material=scene.material(**unlit((1.0, 0.0, 0.0, 0.5), alphaMode="BLEND")))
    pixels = draw(gl, scene.save(tmp_path / "sorted.gltf"), save=tmp_path / "sorted.png")
    assert close(pixels[32, 32], (64, 128, 0)), pixels[32, 32]
    assert close(pixels[32, 14], (128, 0, 0)), "the far one alone over black"


# -- colours and lighting --------------------------------------------------------------------------
def test_vertex_colours_multiply_the_base_colour(gl, tmp_path):
    """COLOR_0 as float RGB (one colour per corner) and as normalised unsigned-byte RGBA, each
    times the base colour factor."""
    scene = Scene()
    scene.quad(half=0.45, z=0.0, colours=np.array([RED[:3], GREEN[:3], BLUE[:3], (1.0, 1.0, 1.0)]),
               material=scene.material(**unlit()), translation=(-0.5, 0.0, 0.0))
    scene.quad(half=0.45, z=0.0, colours=np.tile([0, 255, 255, 255], (4, 1)), colour_component=UBYTE,
               material=scene.material(**unlit((1.0, 0.5, 1.0, 1.0))), translation=(0.5, 0.0, 0.0))
    pixels = draw(gl, scene.save(tmp_path / "colours.gltf"), save=tmp_path / "colours.png")
    # the left quad spans about columns 4..30 and rows 19..45: near each corner its colour dominates
    corners = {(44, 5): 0, (44, 29): 1, (20, 29): 2}  # (row, column) → the dominant channel
    for (row, col), channel in corners.items():
        p = pixels[row, col].astype(int)
        assert p[channel] > 170 and all(p[c] < 110 for c in range(3) if c != channel), (row, col, p)
    assert np.all(pixels[20, 5] > 170), "the white corner"
    assert close(pixels[32, 47], (0, 128, 255)), pixels[32, 47]


@pytest.mark.parametrize("unlit_material", [False, True])
def test_unlit_ignores_the_light(gl, tmp_path, unlit_material):
    """Lit, the quad's colour follows the light; KHR_materials_unlit shows its base colour,
    (204, 102, 51), whatever the light."""
    scene = Scene()
    colour = (0.8, 0.4, 0.2, 1.0)
    fields = unlit(colour) if unlit_material else {"pbrMetallicRoughness": {"baseColorFactor": list(colour)}}
    scene.quad(material=scene.material(**fields))
    character = scene.save(tmp_path / "unlit.gltf")
    facing = draw(gl, character, light=(0.0, 0.0, 1.0), save=tmp_path / f"unlit_{unlit_material}_facing.png")
    grazing = draw(gl, character, light=(0.0, 1.0, 0.05), save=tmp_path / f"unlit_{unlit_material}_grazing.png")
    if unlit_material:
        assert close(facing[32, 32], (204, 102, 51)) and close(grazing[32, 32], (204, 102, 51))
    else:
        assert facing[32, 32].astype(int).sum() - grazing[32, 32].astype(int).sum() > 100


# -- textures ------------------------------------------------------------------------------------
def _halves(scene) -> int:
    """A 2 × 1 texture: red on the left (u < 0.5), green on the right."""
    return scene.texture(np.array([[[255, 0, 0, 255], [0, 255, 0, 255]]], np.uint8))


@pytest.mark.parametrize("transform, left, right", [
    (None, "red", "green"),
    ({"offset": [0.5, 0.0]}, "green", "red"),                 # moved by half the texture (REPEAT)
    ({"scale": [-1.0, 1.0], "offset": [1.0, 0.0]}, "green", "red"),   # mirrored
    ({"texCoord": 1}, "green", "red"),                        # TEXCOORD_1: u → 1 - u
])
def test_texture_transform_moves_the_texture(gl, tmp_path, transform, left, right):
    """KHR_texture_transform on the base colour texture: offset, scale, and texCoord choosing
    the UV set."""
    scene = Scene()
    info = {"index": _halves(scene)}
    if transform is not None:
        info["extensions"] = {"KHR_texture_transform": transform}
    uv0 = np.array([[0.0, 1.0], [1.0, 1.0], [1.0, 0.0], [0.0, 0.0]])
    uv1 = np.c_[1.0 - uv0[:, 0], uv0[:, 1]]
    scene.quad(uvs=[uv0, uv1], material=scene.material(**unlit(pbrMetallicRoughness={"baseColorTexture": info})))
    pixels = draw(gl, scene.save(tmp_path / "transform.gltf"), save=tmp_path / "transform.png")
    named = {"red": (255, 0, 0), "green": (0, 255, 0)}
    assert close(pixels[32, 18], named[left]) and close(pixels[32, 46], named[right]), (pixels[32, 18], pixels[32, 46])


def test_texture_rotation_turns_the_texture(gl, tmp_path):
    """A quarter turn: u' = v, so the red half (u' < 0.5) goes to the top of the quad (v < 0.5)."""
    scene = Scene()
    info = {"index": _halves(scene), "extensions": {"KHR_texture_transform": {"rotation": math.pi / 2}}}
    scene.quad(material=scene.material(**unlit(pbrMetallicRoughness={"baseColorTexture": info})))
    pixels = draw(gl, scene.save(tmp_path / "rotation.gltf"), save=tmp_path / "rotation.png")
    assert close(pixels[18, 32], (255, 0, 0)) and close(pixels[46, 32], (0, 255, 0))


@pytest.mark.parametrize("wrap, quarters", [(10497, "rgrg"), (33648, "rggr"), (33071, "rggg")])
def test_sampler_wrap_modes(gl, tmp_path, wrap, quarters):
    """The texture twice across the quad (scale 2): REPEAT, MIRRORED_REPEAT and CLAMP_TO_EDGE
    on u (glTF 2.0 section 3.8.4)."""
    scene = Scene()
    texture = scene.texture(np.array([[[255, 0, 0, 255], [0, 255, 0, 255]]], np.uint8),
                            {"magFilter": 9728, "minFilter": 9728, "wrapS": wrap})
    info = {"index": texture, "extensions": {"KHR_texture_transform": {"scale": [2.0, 1.0]}}}
    scene.quad(material=scene.material(**unlit(pbrMetallicRoughness={"baseColorTexture": info})))
    pixels = draw(gl, scene.save(tmp_path / "wrap.gltf"), save=tmp_path / f"wrap_{wrap}.png")
    named = {"r": (255, 0, 0), "g": (0, 255, 0)}
    for column, expected in zip((14, 26, 38, 50), quarters):  # the quad spans about columns 8..56
        assert close(pixels[32, column], named[expected]), (column, pixels[32, column])


# -- sides -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("double_sided", [False, True])
def test_back_faces_are_culled_unless_double_sided(gl, tmp_path, double_sided):
    scene = Scene()
    scene.quad(facing=-1, material=scene.material(**unlit(RED, doubleSided=double_sided)))
    pixels = draw(gl, scene.save(tmp_path / "sides.gltf"), save=tmp_path / f"sides_{double_sided}.png")
    assert close(pixels[32, 32], (255, 0, 0) if double_sided else (0, 0, 0))
