"""The credit a character's file carries (:mod:`gpu_jiggle.character.credit`), from glTF's
asset and VRM 0.x and 1.0 meta, taken from an untrusted file."""
from __future__ import annotations

import json

import pytest

from gpu_jiggle.character.credit import MAX_CREDIT_CHARS, credit_of
from gpu_jiggle.data import fox_path


def test_the_fox_credits_its_cc_by_authors():
    credit = credit_of(json.loads(fox_path().read_text()))
    assert credit.startswith("CC-BY 4.0 Model by PixelMannen") and "@tomkranis" in credit


@pytest.mark.parametrize("document, credit", [
    ({"asset": {"version": "2.0"}}, None),
    ({"asset": {"version": "2.0", "copyright": "© A"}}, "© A"),
    ({"asset": {"copyright": "© A"}, "extensions": {"VRM": {"meta": {"title": "T", "author": "B",
                                                                  "licenseName": "CC_BY"}}}}, "© A; T by B (CC_BY)"),
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
    assert credit_of({"asset": {"copyright": "a\nb\x00\x1b[31mc\t d"}}) == "a b [31mc d"
    assert len(credit_of({"asset": {"copyright": "x" * 10 ** 6}})) == MAX_CREDIT_CHARS
