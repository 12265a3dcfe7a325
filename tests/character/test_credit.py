"""The credit a character's file carries (:mod:`gpu_jiggle.character.gltf.credit`), from glTF's
asset and VRM 0.x and 1.0 meta, taken from an untrusted file."""
from __future__ import annotations

import json

import pytest

from gpu_jiggle.character.gltf.credit import MAX_CREDIT_CHARS, credit_of
from gpu_jiggle.data import fox_path

from demo_support import ROOT


def test_the_fox_credits_its_cc_by_authors():
    credit = credit_of(json.loads(fox_path().read_text()))
    assert credit.startswith("CC-BY 4.0 Model by PixelMannen") and "@tomkranis" in credit


@pytest.mark.parametrize("document, credit", [
    ({"asset": {"version": "2.0"}}, None),
    ({"asset": {"version": "2.0", "copyright": "© A"}}, "© A"),
    ({"asset": {"copyright": "© A"}, "extensions": {"VRM": {"meta": {"title": "T", "author": "B",
                                                                  "licenseName": "CC_BY"}}}}, "© A; T by B (CC BY)"),
    ({"extensions": {"VRM": {"meta": {"title": "T", "author": "B", "reference": "Adapted by C",
                                      "licenseName": "CC_BY_NC_SA"}}}}, "T by B; Adapted by C (CC BY-NC-SA)"),
    ({"extensions": {"VRM": {"meta": {"author": "B", "licenseName": "Redistribution_Prohibited"}}}},
     "B (Redistribution Prohibited)"),
    ({"extensions": {"VRM": {"meta": {"author": "B", "licenseName": "Other", "otherLicenseUrl": "https://l"}}}},
     "B (https://l)"),
    ({"extensions": {"VRMC_vrm": {"meta": {"name": "N", "authors": ["B", "C", 7], "licenseUrl": "https://l",
                                           "copyrightInformation": "© B"}}}}, "N by B, C (https://l); © B"),
])
def test_credits_from_the_asset_and_vrm_meta(document, credit):
    assert credit_of(document) == credit


@pytest.mark.parametrize("document", [None, [], {"asset": "x"}, {"asset": {"copyright": 7}},
                                      {"extensions": {"VRM": {"meta": "x"}}}, {"extensions": {"VRMC_vrm": []}},
                                      {"extensions": {"VRMC_vrm": {"meta": {"authors": "not a list"}}}}])
def test_a_file_of_the_wrong_shapes_gives_no_credit(document):
    assert credit_of(document) is None


def test_control_characters_are_spaces_and_a_long_credit_is_cut():
    assert credit_of({"asset": {"copyright": "a\nb\x00\x1b[31mc\t d\u2028e"}}) == "a b [31mc d e"
    long = credit_of({"asset": {"copyright": "x" * 10 ** 6}})
    assert len(long) == MAX_CREDIT_CHARS and long.endswith("x…")


def test_joiners_stay_and_direction_overrides_go():
    family, name = "\U0001F468\u200d\U0001F469\u200d\U0001F467", "\u092e\u093f\u200d\u0924\u094d\u0930"
    assert credit_of({"asset": {"copyright": f"{family} {name}"}}) == f"{family} {name}"
    assert credit_of({"asset": {"copyright": "by \u202eevil\u202c and \u2066x\u2069"}}) == "by evil and x"


def test_the_bundled_avatar_credits_its_adapter():
    from gpu_jiggle.character.gltf.loader import Character

    avatar = ROOT / "data" / "vrm" / "Godette_vrm_v4.vrm"
    assert credit_of(Character.load(avatar).json) == "Low-Poly Godette by SirRichard94; Adapted to VRM by Lyuma (CC BY)"
