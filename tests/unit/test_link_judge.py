"""The model's judgement of a word is read by the words of the part it names, never by a number; a reply
outside the parts offered decides nothing."""

from __future__ import annotations

import json

import pytest

from questions.linking import SchemaTerm
from tools.link_judge import FRAMING, NONE, candidates, described, judge_schema, parse_judgement

pytestmark = pytest.mark.unit

SUBDIVISION = SchemaTerm("label", "Subdivision")
IN_COUNTRY = SchemaTerm("relationship", "IN_COUNTRY", "City->Country")
ELEVATION = SchemaTerm("property", "elevation_ft", "Airport")
OPTIONS = {"state": [SUBDIVISION, IN_COUNTRY], "high": [ELEVATION]}


def test_each_part_is_offered_in_plain_words_with_what_it_joins() -> None:
    assert described(SUBDIVISION) == "subdivision (a kind of thing)"
    assert described(IN_COUNTRY) == "in country (from a city to a country)"
    assert described(ELEVATION) == "elevation ft (a property of an airport)"
    schema = judge_schema(OPTIONS)
    assert schema["required"] == ["state", "high"]
    assert schema["properties"]["high"]["enum"] == [described(ELEVATION), FRAMING, NONE]


def test_the_reply_names_a_part_or_none() -> None:
    reply = json.dumps({"state": described(SUBDIVISION), "high": NONE})
    assert parse_judgement(reply, OPTIONS) == ({"state": SUBDIVISION, "high": None}, set())
    framed = json.dumps({"state": FRAMING, "high": described(ELEVATION)})
    assert parse_judgement(framed, OPTIONS) == ({"high": ELEVATION}, {"state"})


@pytest.mark.parametrize(
    "reply",
    ["not json", "[1, 2]", json.dumps({"state": "1"}), json.dumps({"state": described(ELEVATION)})],
)
def test_a_reply_outside_the_offered_parts_decides_nothing(reply: str) -> None:
    assert parse_judgement(reply, OPTIONS) == ({}, set())


def test_every_relationship_is_offered_beside_a_words_nearest_parts() -> None:
    from questions.linking import Linking

    linking = Linking((), ("placed",), {"placed": ((SUBDIVISION, 0.31), (ELEVATION, 0.3))})
    order = (SUBDIVISION, IN_COUNTRY, ELEVATION)
    assert candidates(linking, ("placed",), order) == {"placed": [SUBDIVISION, IN_COUNTRY, ELEVATION]}
