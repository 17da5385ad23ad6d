"""The query form's reading of the model's reply and its completion from the question's own words
(cypher/intent.py); what the compiled queries return is tested on FalkorDB in
tests/integration/test_query_form_live.py."""

from __future__ import annotations

import json

import pytest

from cypher.intent import (
    Anchor,
    Hop,
    IntentError,
    QueryIntent,
    intent_json_schema,
    parse_intent,
    with_spelled_steps,
)

START = Anchor("Family", "name", "Pazzi")


def test_the_forms_schema_offers_only_the_live_schemas_names() -> None:
    schema = intent_json_schema(
        {"Family": ["name"], "Town": ["name", "population"]},
        {("Family", "MARRIED_INTO", "Family"), ("Family", "LIVES_IN", "Town")},
    )
    props = schema["properties"]
    assert props["start"]["properties"]["label"]["enum"] == ["Family", "Town"]
    assert props["steps"]["items"]["properties"]["relationship"]["enum"] == ["LIVES_IN", "MARRIED_INTO"]
    assert props["answer_key"]["enum"] == ["", "name", "population"]


def test_a_reply_becomes_a_form_and_empty_parts_are_left_out() -> None:
    reply = {
        "start": {"label": "Family", "key": "name", "value": " Pazzi "},
        "steps": [{"relationship": "MARRIED_INTO", "direction": "incoming"}],
        "combine": "none",
        "other": {"label": "Family", "key": "", "value": ""},
        "condition": {"key": "", "operator": "=", "value": ""},
        "answer": "count",
        "answer_key": "",
    }
    assert parse_intent(json.dumps(reply)) == QueryIntent(START, (Hop("MARRIED_INTO", "incoming"),), answer="count")


@pytest.mark.parametrize("reply", ["", "[]", '{"start": 3}', '{"steps": []}'])
def test_a_reply_that_is_no_form_is_refused(reply: str) -> None:
    with pytest.raises(IntentError):
        parse_intent(reply)


def test_steps_the_question_spells_out_complete_a_short_walk_keeping_the_directions_given() -> None:
    form = QueryIntent(START, (Hop("MARRIED_INTO", "incoming"),))
    completed = with_spelled_steps(form, ["MARRIED_INTO", "MARRIED_INTO"])
    assert completed.hops == (Hop("MARRIED_INTO", "incoming"), Hop("MARRIED_INTO", "outgoing"))
    assert completed.start == form.start and completed.answer == form.answer


def test_a_walk_through_a_relationship_the_question_does_not_spell_is_left_alone() -> None:
    form = QueryIntent(START, (Hop("LIVES_IN"),))
    assert with_spelled_steps(form, ["MARRIED_INTO", "MARRIED_INTO"]) == form
    full = QueryIntent(START, (Hop("MARRIED_INTO"), Hop("MARRIED_INTO")))
    assert with_spelled_steps(full, ["MARRIED_INTO"]) == full
