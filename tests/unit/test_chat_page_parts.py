"""What the chat page is given beyond the run's messages: example questions written from any graph's schema, a
step's output as a bounded table, what an action plan will change, and the run's plan and steps as events."""

from __future__ import annotations

import json

from actions.ontology import Ontology
from chat.action_changes import planned_changes
from chat.events import StreamState, confidence_event, events_of, run_state_event
from chat.example_questions import GraphSample, example_questions, name_of, relation_phrase
from chat.step_output import MAX_ROWS, step_output
from contracts.action_path import ActionIntent, ActionTarget, event_message, plan_event
from contracts.plan import ConfidenceMetrics, ExecutionPlan, ExecutionStep, StepResult
from contracts.run import RunStatus, StepState, StepStatus
from embedded import demo_graph

FILMS = GraphSample(
    labels={"Person": ["name", "born"], "Movie": ["title", "released", "tagline"], "Studio": ["studioId", "city"]},
    rels={("Person", "ACTED_IN", "Movie"), ("Person", "DIRECTED", "Movie"), ("Movie", "PRODUCED_BY", "Studio")},
    nodes={
        "Person": {"name": "Keanu Reeves", "born": 1964},
        "Movie": {"title": "The Matrix", "released": 1999, "tagline": "Welcome to the Real World"},
        "Studio": {"studioId": "WB-1", "city": "Burbank"},
    },
    linked={
        ("Person", "ACTED_IN", "Movie"): {"title": "The Matrix", "released": 1999},
        ("Person", "DIRECTED", "Movie"): {"title": "Cloud Atlas", "released": 2012},
        ("Movie", "PRODUCED_BY", "Studio"): {"studioId": "WB-1", "city": "Burbank"},
    },
)


def test_examples_are_written_from_the_schema_of_a_graph_never_seen() -> None:
    questions = {e.kind: e.question for e in example_questions(FILMS)}
    assert questions["count"] == "How many movies are there?"  # the label most relationships touch
    assert questions["one-hop"] == "Which person acted in the movie 'The Matrix'?"
    assert questions["most"] == "Which studio has the most movies?"
    assert questions["lookup"] == "What is the released of the movie 'The Matrix'?"
    assert questions["highest"] == "Which movie has the highest released?"
    assert "action" not in questions  # no ontology actions: none offered
    assert example_questions(FILMS) == example_questions(FILMS)  # the same graph, the same examples


def test_an_ontologys_action_is_offered_on_a_named_related_entity() -> None:
    sample = GraphSample(
        labels=FILMS.labels,
        rels=FILMS.rels,
        nodes=FILMS.nodes,
        linked=FILMS.linked,
        actions=[("Movie", "archiveTitle"), ("Person", "retire")],
    )
    action = next(e for e in example_questions(sample) if e.kind == "action")
    assert action.question == "Archive title the movies of the studio 'WB-1'"


def test_a_node_is_named_by_its_name_else_by_an_identifier_never_by_a_shared_value() -> None:
    assert name_of({"currency": "USD", "status": "approved", "po_number": "PO-1001"}) == "PO-1001"
    assert name_of({"display_name": "Acme", "code": "AC-1", "name": "Acme Ltd"}) == "Acme Ltd"
    assert name_of({"status": "approved", "amount": 12.5}) is None
    assert name_of({"name": "x" * 200, "userId": "u-17"}) == "u-17"  # a description is no name


def test_a_relationship_type_reads_as_a_verb() -> None:
    assert relation_phrase("SUPPLIES") == "supplies"
    assert relation_phrase("ISSUED_TO") == "is issued to"
    assert relation_phrase("OWNED_BY") == "is owned by"
    assert relation_phrase("ACTED_IN") == "acted in"
    assert relation_phrase("hasCapital") == "has capital"


def test_rows_are_a_bounded_table_and_other_outputs_bounded_text() -> None:
    rows = [[f"name {i}", i] for i in range(57)]
    shown = step_output(json.dumps({"columns": ["name", "n"], "rows": rows, "row_count": 57, "truncated": False}))
    assert shown["columns"] == ["name", "n"] and len(shown["rows"]) == MAX_ROWS and shown["rows"][0] == ["name 0", 0]
    assert shown["row_count"] == 57 and shown["truncated"] is True
    records = step_output(json.dumps([{"a": 1, "b": {"x": 1}}, {"a": 2, "c": None}]))
    assert records == {
        "columns": ["a", "b", "c"],
        "rows": [[1, '{"x": 1}', None], [2, None, None]],
        "row_count": 2,
        "truncated": False,
    }
    fields = step_output(json.dumps({"total": 20, "succeeded": 18, "failures": [{"entity_id": "PO-1"}]}))
    assert fields["rows"] == [["total", 20], ["succeeded", 18]]
    text = step_output("password=hunter2 and then " + "z" * 9000)
    assert "hunter2" not in text["text"] and len(text["text"]) == 4000


def test_what_an_action_will_change_comes_from_its_definition() -> None:
    ontology = Ontology.load(demo_graph.ONTOLOGY_PATH)
    paying = planned_changes({"entity_type": "PurchaseOrder", "action_name": "makePayment"}, ontology)
    assert paying["changes"] == [
        {"property": "paid", "value": True},
        {"debit": "total_amount", "account": "Account ACC-OPS"},
    ]
    assert paying["irreversible"] is True
    holding = planned_changes(
        {"entity_type": "PurchaseOrder", "action_name": "hold", "parameters": {"reason": "audit"}}, ontology
    )
    assert holding["changes"][1] == {"property": "hold_reason", "value": "audit", "parameter": "reason"}
    assert holding["irreversible"] is False and holding["inverse"] == "release"
    assert planned_changes({"entity_type": "PurchaseOrder", "action_name": "teleport"}, ontology) == {}


def test_an_action_plan_event_says_what_changes_only_where_the_ontology_is_known() -> None:
    intent = ActionIntent(entity_type="PurchaseOrder", action_name="hold", parameters={"reason": "audit"})
    message = event_message(plan_event(intent, [ActionTarget(entity_id="PO-1")]))
    plain = events_of(message, StreamState())[0]
    assert plain["type"] == "action_plan" and "changes" not in plain["plan"]
    told = events_of(message, StreamState(ontology=Ontology.load(demo_graph.ONTOLOGY_PATH)))[0]
    assert told["plan"]["changes"][0] == {"property": "status", "value": "on_hold"}
    assert told["plan"]["targets"] == plain["plan"]["targets"]  # the event's own fields as they were


def test_the_plan_and_its_steps_reach_the_page_with_each_steps_rows() -> None:
    plan = ExecutionPlan(
        id="p",
        steps=[
            ExecutionStep(id="a", function="GraphQuery", arguments={"query": "MATCH (n) RETURN n.name"}),
            ExecutionStep(
                id="b", function="GraphQuery", arguments={"query": "MATCH (n) RETURN count(n)"}, dependencies=["a"]
            ),
        ],
    )
    status = RunStatus(
        phase="completed",
        plan=plan,
        final_confidence=0.8,
        steps=[
            StepStatus(
                step_id="a",
                function="GraphQuery",
                state=StepState.SUCCEEDED,
                score=0.9,
                threshold=0.75,
                retries=2,
                reasoning="3 rows",
            ),
            StepStatus(step_id="b", function="GraphQuery", state=StepState.SKIPPED, threshold=0.75),
        ],
    )
    state = run_state_event(status)
    assert state["plan"][1] == {
        "step_id": "b",
        "function": "GraphQuery",
        "dependencies": ["a"],
        "threshold": 0.75,
        "arguments": {"query": "MATCH (n) RETURN count(n)"},
    }
    assert state["steps"][0]["retries"] == 2 and state["steps"][1]["state"] == "skipped"
    result = StepResult(
        step_id="a",
        success=True,
        confidence=ConfidenceMetrics(score=0.9),
        output=json.dumps({"columns": ["n.name"], "rows": [["x"]], "row_count": 1, "truncated": False}),
    )
    final = confidence_event(status, [result])
    assert final["score"] == 0.8 and final["plan"] == state["plan"]
    assert final["steps"][0]["output"]["rows"] == [["x"]] and "output" not in final["steps"][1]
    assert set(confidence_event(status)["steps"][0]) >= {
        "step_id",
        "function",
        "state",
        "score",
        "threshold",
        "reasoning",
    }  # the fields the event always had
