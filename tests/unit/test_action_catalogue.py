"""A question about what can be done is answered from the action definitions: the actions it names, else
those of the class it names, else all; each with what it needs, when it is refused and whether it can be
undone. A domain of its own, so nothing leans on the demo's names."""

from __future__ import annotations

from actions.catalogue import about_actions, asked_about, asks_for_change, catalogue_answer, is_question
from actions.ontology import Ontology
from tests.unit.test_action_scope import LIBRARY

ONTOLOGY = Ontology.model_validate(
    {
        **LIBRARY,
        "actions": {
            **LIBRARY["actions"],
            "Loan": {
                **LIBRARY["actions"]["Loan"],
                "reopen": {
                    "description": "Reopen a closed loan.",
                    "effects": [{"set": "status", "value": "open"}],
                    "preconditions": [
                        {"property": "status", "op": "eq", "value": "closed", "message": "Loan is not closed"}
                    ],
                    "inverse": "close",
                },
            },
            "Member": {"suspend": {"effects": [{"set": "city", "value": "-"}], "irreversible": True}},
        },
    }
)


def test_the_question_picks_the_actions_it_names_else_its_class_else_all() -> None:
    assert asked_about(ONTOLOGY, "What does annotate require?") == [("Loan", "annotate")]
    assert asked_about(ONTOLOGY, "Which actions are available for members?") == [("Member", "suspend")]
    assert {c for c, _ in asked_about(ONTOLOGY, "What can be done?")} == {"Loan", "Member"}


def test_the_answer_states_parameters_refusals_and_undo_from_the_definitions() -> None:
    answer = catalogue_answer(ONTOLOGY, "Which actions are available for a Loan?")
    assert answer.startswith("Actions on Loan: waive, annotate, close, reopen.")
    assert "- annotate: needs note (string); cannot be undone." in answer
    assert "- reopen: Reopen a closed loan; refused when: loan is not closed; undone by close." in answer
    assert "suspend" not in answer


def test_only_questions_about_actions_are_answered_from_the_catalogue() -> None:
    assert about_actions(ONTOLOGY, "Which actions are available for a Loan?")
    assert about_actions(ONTOLOGY, "what does waive do")
    assert about_actions(ONTOLOGY, "What can I do with loans?")
    assert not about_actions(ONTOLOGY, "What is the capital of France?")
    assert not about_actions(ONTOLOGY, "Waive the overdue loans of Ana Lima")  # a request, not a question
    assert is_question("Can you list the actions?") and not is_question("Close loan L-1")


def test_a_request_opening_with_an_actions_own_verb_asks_for_a_change() -> None:
    assert asks_for_change(ONTOLOGY, "Waive the overdue loans of Ana Lima") == "waive"
    assert asks_for_change(ONTOLOGY, "Please annotate L-1: lost") == "annotate"
    assert asks_for_change(ONTOLOGY, "run reopen on L-1") == "reopen"
    assert asks_for_change(ONTOLOGY, "Reopen a closed loan L-7") == "reopen"  # also its description's verb
    assert asks_for_change(ONTOLOGY, "Which loans can I waive?") is None  # a question
    assert asks_for_change(ONTOLOGY, "Show the loans of Ana Lima") is None  # a reading verb
    assert asks_for_change(ONTOLOGY, "Run a report on loans") is None  # run, but no action after it
