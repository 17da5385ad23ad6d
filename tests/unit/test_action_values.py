"""An action intent's parameters and filters are checked against the ontology's declared names and types
before anything runs, with problems in plain words; only declared names can reach Cypher text."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from actions.intent import actions_catalogue, checked_intent, planner_schema, stated_in
from actions.ontology import Ontology, UnknownName
from actions.queries import execution_query
from actions.targets import targets_query
from actions.values import check_filters, check_parameters, coerce
from contracts.action_path import ActionIntent, PropertyFilter, filters_text, parameters_text
from embedded import demo_graph

# A domain of its own, so nothing here leans on the demo's names.
LIBRARY: dict[str, Any] = {
    "name": "library",
    "classes": {
        "Loan": {
            "key": "loan_id",
            "display": "loan_id",
            "properties": {
                "loan_id": "string",
                "status": "string",
                "items": "integer",
                "fee": "float",
                "due": "date",
                "flagged": "boolean",
                "note": "string",
            },
        },
        "Member": {"key": "member_id", "display": "name", "properties": {"member_id": "string", "name": "string"}},
    },
    "relationships": [{"type": "BORROWED_BY", "from": "Loan", "to": "Member"}],
    "actions": {
        "Loan": {
            "renew": {
                "parameters": {"until": "date", "note": "string"},
                "preconditions": [{"property": "status", "op": "ne", "value": "closed", "message": "Loan closed"}],
                "effects": [{"set": "due", "param": "until"}, {"set": "note", "param": "note"}],
                "inverse": "renew",
            },
            "charge": {
                "parameters": {"amount": "float", "times": "integer", "waive": "boolean"},
                "effects": [{"set": "fee", "param": "amount"}],
            },
        }
    },
}
ONTOLOGY = Ontology.model_validate(LIBRARY)
RENEW = ONTOLOGY.actions["Loan"]["renew"]


@pytest.mark.parametrize(
    ("value", "kind", "expected"),
    [
        ("2024-07-01", "date", "2024-07-01"),
        (" 2024-07-01 ", "date", "2024-07-01"),
        (3, "integer", 3),
        ("3", "integer", 3),
        (3.0, "integer", 3),
        (1000, "float", 1000.0),
        ("12.5", "float", 12.5),
        (True, "boolean", True),
        ("false", "boolean", False),
        ("late", "string", "late"),
        (42, "string", "42"),
    ],
)
def test_values_are_coerced_to_their_declared_type(value: Any, kind: Any, expected: Any) -> None:
    assert coerce(value, kind) == expected
    assert type(coerce(value, kind)) is type(expected)


@pytest.mark.parametrize(
    ("value", "kind", "words"),
    [
        ("next friday", "date", "'next friday' is not a date (YYYY-MM-DD)"),
        ("2024-02-30", "date", "is not a date"),
        ("01/07/2024", "date", "is not a date"),
        ("1,000", "float", "'1,000' is not a number"),
        (float("inf"), "float", "is not a number"),
        (2.5, "integer", "is not an integer"),
        (True, "integer", "is not an integer"),
        ("yes", "boolean", "is not true or false"),
        (1, "boolean", "is not true or false"),
        (None, "string", "no value"),
        (["a"], "string", "is not text"),
        ("x" * 1001, "string", "longer than 1000"),
    ],
)
def test_values_of_the_wrong_type_are_refused_in_plain_words(value: Any, kind: Any, words: str) -> None:
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
        coerce(value, kind)


def test_parameters_unknown_missing_and_mistyped_are_named() -> None:
    values, problems = check_parameters("renew", RENEW, {"until": "2024-13-01", "colour": "red"})
    assert values == {}
    assert problems == [
        "renew has no parameter 'colour'; its parameters: until (date), note (string)",
        "parameter until of renew: '2024-13-01' is not a date (YYYY-MM-DD)",
        "renew needs the parameter note (text), which the request must give",
    ]
    values, problems = check_parameters("renew", RENEW, {"until": "2024-07-01", "note": "holiday"})
    assert (values, problems) == ({"until": "2024-07-01", "note": "holiday"}, [])


def test_filters_need_declared_properties_known_ops_and_typed_values() -> None:
    filters = [
        PropertyFilter(property="items", op="gt", value="3"),
        PropertyFilter(property="status", op="in", value=["open", "late"]),
        PropertyFilter(property="colour", value="red"),
        PropertyFilter(property="status", op="like", value="o%"),
        PropertyFilter(property="flagged", op="lt", value=True),
        PropertyFilter(property="status", op="eq", value=["open"]),
        PropertyFilter(property="due", op="ge", value="soon"),
    ]
    checked, problems = check_filters(ONTOLOGY, "Loan", filters)
    assert [f.model_dump() for f in checked] == [
        {"property": "items", "op": "gt", "value": 3},
        {"property": "status", "op": "in", "value": ["open", "late"]},
    ]
    assert problems == [
        "Loan has no property 'colour' to filter on; it has loan_id, status, items, fee, due, flagged, note",
        "filter on status: unknown op 'like'; use one of eq, ne, lt, le, gt, ge, in",
        "filter on flagged: a boolean is compared with eq or ne, not lt",
        "filter on status (string): a list needs the op 'in', not 'eq'",
        "filter on due (date): 'soon' is not a date (YYYY-MM-DD)",
    ]


def test_an_intent_is_checked_whole_and_returned_with_coerced_values() -> None:
    intent = ActionIntent(
        entity_type="Loan",
        action_name="charge",
        related_class="Member",
        related_name="Ana",
        parameters={"amount": 5, "times": "2", "waive": "false"},
        filters=[PropertyFilter(property="fee", op="lt", value=10)],
    )
    checked, problems = checked_intent(ONTOLOGY, intent)
    assert problems == []
    assert checked.parameters == {"amount": 5.0, "times": 2, "waive": False}
    assert checked.filters[0].value == 10.0
    # Filters alone name targets; nothing at all does not.
    by_filters = ActionIntent(
        entity_type="Loan", action_name="charge", filters=intent.filters, parameters=intent.parameters
    )
    assert checked_intent(ONTOLOGY, by_filters)[1] == []
    nothing = by_filters.model_copy(update={"filters": []})
    assert checked_intent(ONTOLOGY, nothing)[1] == [
        "name the entities: entity_ids, or related_class and related_name, or filters"
    ]


def test_the_ontology_refuses_effects_that_use_undeclared_or_mistyped_parameters() -> None:
    def with_effect(effect: dict[str, Any], parameters: dict[str, str]) -> dict[str, Any]:
        action = {"parameters": parameters, "effects": [effect]}
        return {**LIBRARY, "actions": {"Loan": {"renew": action}}}

    with pytest.raises(ValidationError, match="uses undeclared parameter 'until'"):
        Ontology.model_validate(with_effect({"set": "due", "param": "until"}, {}))
    with pytest.raises(ValidationError, match="parameter until is integer, property due is date"):
        Ontology.model_validate(with_effect({"set": "due", "param": "until"}, {"until": "integer"}))
    with pytest.raises(ValidationError, match="from a parameter or to a value, not both"):
        Ontology.model_validate(with_effect({"set": "due", "param": "until", "value": "x"}, {"until": "date"}))
    with pytest.raises(ValidationError, match="unusable property or parameter names"):
        Ontology.model_validate(with_effect({"set": "note", "value": "x"}, {"x` OR 1=1": "string"}))


def test_hostile_names_never_reach_query_text_and_values_stay_parameters() -> None:
    hostile = PropertyFilter(property="status` = 'x' OR true //", op="eq", value="x")
    with pytest.raises(UnknownName):
        targets_query(ONTOLOGY, "Loan", [hostile], 10)
    with pytest.raises(UnknownName):
        targets_query(ONTOLOGY, "Loan", [PropertyFilter(property="status", op="= 'x' OR true //", value=1)], 10)
    value = "x' OR 1=1 WITH e MATCH (n) DETACH DELETE n //"
    query, params = targets_query(
        ONTOLOGY, "Loan", [PropertyFilter(property="status", value=value)], 10, "Member", ["M-1"]
    )
    assert value not in query and params["f0"] == value
    query, params = execution_query(ONTOLOGY, "Loan", "renew", "L-1", "k", {}, {"until": "2024-07-01", "note": value})
    assert value not in query and value in params.values()
    with pytest.raises(UnknownName, match="missing"):
        execution_query(ONTOLOGY, "Loan", "renew", "L-1", "k", {}, {"until": "2024-07-01"})


def test_the_planner_is_offered_the_ontologys_parameters_and_properties_with_types() -> None:
    text = actions_catalogue(ONTOLOGY)
    assert "- Loan (properties: loan_id: string, status: string, items: integer" in text
    assert "  - renew(until: date, note: string)" in text and "  - charge(amount: float, times: integer" in text
    schema = planner_schema(ONTOLOGY)["properties"]
    assert schema["parameters"]["properties"] == {
        "amount": {"type": "number"},
        "note": {"type": "string"},
        "times": {"type": "integer"},
        "until": {"type": "string", "format": "date"},
        "waive": {"type": "boolean"},
    }
    assert schema["filters"]["items"]["properties"]["property"]["enum"] == sorted(
        LIBRARY["classes"]["Loan"]["properties"]
    )


def test_parameters_and_filters_read_as_plain_conditions() -> None:
    assert parameters_text({"reason": "supplier dispute", "days": 3}) == 'reason="supplier dispute", days=3'
    assert (
        filters_text(
            [
                PropertyFilter(property="status", value="approved"),
                PropertyFilter(property="total_amount", op="gt", value=1000.0),
                {"property": "status", "op": "in", "value": ["a", "b"]},
            ]
        )
        == 'status = "approved" and total_amount > 1000.0 and status in ["a", "b"]'
    )


def test_the_demo_ontology_declares_parameterised_actions() -> None:
    ontology = Ontology.load(demo_graph.ONTOLOGY_PATH)
    hold = ontology.require_action("PurchaseOrder", "hold")
    assert hold.parameters == {"reason": "string"} and hold.inverse == "release"
    assert ontology.require_action("Invoice", "reschedule").parameters == {"due_date": "date"}


@pytest.mark.parametrize(
    ("request_text", "f", "stated"),
    [
        ("renew the late loans", PropertyFilter(property="status", value="late"), True),
        ("renew every loan", PropertyFilter(property="status", value="late"), False),
        ("renew loans that are open or late", PropertyFilter(property="status", op="in", value=["open", "late"]), True),
        ("renew loans that are open", PropertyFilter(property="status", op="in", value=["open", "late"]), False),
        ("renew loans with a fee over 1,000", PropertyFilter(property="fee", op="gt", value=1000.0), True),
        ("renew loans with a fee over 1000.5", PropertyFilter(property="fee", op="gt", value=1000.5), True),
        ("renew loans with a fee over 10000", PropertyFilter(property="fee", op="gt", value=1000.0), False),
        ("renew loans with more than 3 items", PropertyFilter(property="items", op="gt", value=3), True),
        ("renew every loan", PropertyFilter(property="items", op="gt", value=3), False),
        ("renew the unflagged loans", PropertyFilter(property="flagged", value=False), True),
        ("renew every loan", PropertyFilter(property="flagged", value=False), False),
        ("renew the loans due before March", PropertyFilter(property="due", op="lt", value="2024-03-01"), True),
    ],
)
def test_a_filter_counts_as_stated_only_when_the_request_says_it(
    request_text: str, f: PropertyFilter, stated: bool
) -> None:
    assert stated_in(ONTOLOGY, "Loan", f, request_text) is stated


def test_an_action_of_another_class_is_pointed_to() -> None:
    wrong = ActionIntent(entity_type="Member", action_name="renew", entity_ids=["L-1"])
    assert checked_intent(ONTOLOGY, wrong)[1] == [
        "Member has no action 'renew'; its actions: none; renew is an action of Loan: set entity_type to Loan and "
        "keep action_name renew"
    ]


def test_a_date_condition_is_stated_only_with_when() -> None:
    """'purchase orders' names an order date's words, not a date: a condition on it needs a year, a month or
    a word of time in the request."""
    after = PropertyFilter(property="due", op="gt", value="2024-01-01")
    assert not stated_in(ONTOLOGY, "Loan", after, "Renew all due loans")
    assert stated_in(ONTOLOGY, "Loan", after, "Renew the loans due after 2024")
    assert stated_in(ONTOLOGY, "Loan", after, "Renew the loans due after January")
