"""An action's target selection uses everything the request states: what the plan left out is added when the
request can mean it one way only, and reported (for a human to see first) when it cannot. A domain of its
own (a lending library), so nothing here leans on the demo's names."""

from __future__ import annotations

from typing import Any

from actions.ontology import Ontology
from actions.request_scope import HeldName, RequestScope
from actions.scope import fit_intent
from actions.scope_stated import stated_numbers, stated_value
from contracts.action_path import ActionIntent, PropertyFilter

LIBRARY: dict[str, Any] = {
    "name": "library",
    "classes": {
        "Loan": {
            "key": "loan_id",
            "display": "loan_id",
            "properties": {
                "loan_id": "string",
                "status": "string",
                "fee": "float",
                "returned": "boolean",
                "note": "string",
            },
        },
        "Member": {
            "key": "member_id",
            "display": "name",
            "properties": {"member_id": "string", "name": "string", "city": "string"},
        },
        "Branch": {
            "key": "branch_id",
            "display": "name",
            "properties": {"branch_id": "string", "name": "string", "city": "string"},
        },
        "Fund": {
            "key": "fund_id",
            "display": "name",
            "properties": {"fund_id": "string", "name": "string", "balance": "float"},
        },
        "Author": {"key": "author_id", "display": "name", "properties": {"author_id": "string", "name": "string"}},
    },
    "relationships": [
        {"type": "BORROWED_BY", "from": "Loan", "to": "Member"},
        {"type": "LENT_AT", "from": "Loan", "to": "Branch"},
    ],
    "actions": {
        "Loan": {
            "waive": {
                "account": {"class": "Fund", "id": "F-1"},
                "preconditions": [{"funds": "fee", "message": "no funds"}],
                "effects": [{"set": "status", "value": "waived"}, {"debit": "fee"}],
            },
            "annotate": {"parameters": {"note": "string"}, "effects": [{"set": "note", "param": "note"}]},
            "close": {"effects": [{"set": "returned", "value": True}, {"set": "status", "value": "closed"}]},
        }
    },
}
ONTOLOGY = Ontology.model_validate(LIBRARY)
STATUSES = ["overdue", "open", "waived", "closed"]
ANA = HeldName(mention="Ana Lima", class_name="Member", property="name", value="Ana Lima", entities=1, key="M-7")


def scope(*held: HeldName, unheld: tuple[str, ...] = ()) -> RequestScope:
    return RequestScope(held=list(held), unheld=list(unheld), categories={"status": STATUSES})


def intent(action: str = "waive", **fields: Any) -> ActionIntent:
    return ActionIntent(entity_type="Loan", action_name=action, **fields)


def test_a_named_related_entity_the_plan_dropped_narrows_the_targets() -> None:
    """The worst failure: "waive the overdue loans of Ana Lima" planned as every overdue loan."""
    planned = intent(filters=[PropertyFilter(property="status", value="overdue")])
    fitted = fit_intent(ONTOLOGY, planned, "Waive the overdue loans of Ana Lima", scope(ANA))
    assert (fitted.intent.related_class, fitted.intent.related_name) == ("Member", "Ana Lima")
    assert fitted.intent.filters == planned.filters and fitted.left_out == []
    assert fitted.added == [
        "Added Member 'Ana Lima' to the selection: the request names it and the plan had left it out."
    ]


def test_an_excluded_related_entity_is_left_out_of_the_targets() -> None:
    """ "Every overdue loan except Ana Lima's": the targets are those related to no such member, whether the
    plan forgot her or selected by her (the wrong way round)."""
    planned = intent(filters=[PropertyFilter(property="status", value="overdue")])
    for plan in (planned, planned.model_copy(update={"related_class": "Member", "related_name": "Ana Lima"})):
        fitted = fit_intent(ONTOLOGY, plan, "Waive the overdue loans except those of Ana Lima", scope(ANA))
        assert (fitted.intent.related_class, fitted.intent.related_name, fitted.intent.related_excluded) == (
            "Member",
            "Ana Lima",
            True,
        )
        assert fitted.added == ["Excluded the Loan entities of Member 'Ana Lima': the request says 'except'."]
        assert fitted.left_out == [] and fitted.intent.filters == planned.filters


def test_an_exclusion_the_selection_cannot_express_is_left_out() -> None:
    porto = HeldName(mention="Porto", class_name="Branch", property="name", value="Porto", entities=1, key="B-1")
    two = fit_intent(
        ONTOLOGY,
        intent(filters=[PropertyFilter(property="status", value="overdue")]),
        "Waive the overdue loans except those of Ana Lima or of Porto",
        scope(ANA, porto),
    )
    assert not two.intent.related_excluded and two.added == []
    assert two.left_out[0] == "the exclusion the request states ('except'): the selection excludes nothing"
    # A condition the request excludes, selected by: "overdue" is what it excludes.
    inverted = fit_intent(
        ONTOLOGY,
        intent(filters=[PropertyFilter(property="status", value="overdue")]),
        "Waive every loan that is not overdue",
        scope(),
    )
    assert inverted.left_out == [
        "the exclusion the request states ('not'): the selection excludes nothing",
        "'overdue': the request excludes it and the selection selects by it",
    ]
    # A "ne" filter is how a selection excludes a value.
    excluded = fit_intent(
        ONTOLOGY,
        intent(filters=[PropertyFilter(property="status", op="ne", value="closed")]),
        "Waive every loan that is not closed",
        scope(),
    )
    assert excluded.left_out == []


def test_a_stated_category_value_becomes_a_filter_and_the_actions_own_effect_does_not() -> None:
    planned = intent(related_class="Member", related_name="Ana Lima")
    fitted = fit_intent(ONTOLOGY, planned, "Waive the overdue loans of Ana Lima", scope(ANA))
    assert fitted.intent.filters == [PropertyFilter(property="status", value="overdue")]
    # "waived" is what waive writes: the request says what it wants done, not which loans.
    effect = fit_intent(ONTOLOGY, planned, "Mark Ana Lima's loans as waived", scope(ANA))
    assert effect.intent.filters == [] and effect.left_out == []
    two = fit_intent(ONTOLOGY, planned, "Waive the open or overdue loans of Ana Lima", scope(ANA))
    assert two.intent.filters == [PropertyFilter(property="status", op="in", value=["overdue", "open"])]


def test_a_category_filter_on_another_value_leaves_the_stated_one_out() -> None:
    planned = intent(
        related_class="Member", related_name="Ana Lima", filters=[PropertyFilter(property="status", value="open")]
    )
    fitted = fit_intent(ONTOLOGY, planned, "Waive the overdue loans of Ana Lima", scope(ANA))
    assert fitted.intent == planned and fitted.left_out == ["status 'overdue'"]


def test_a_stated_flag_is_added_with_its_polarity() -> None:
    planned = intent(related_class="Member", related_name="Ana Lima")
    for request, value in [
        ("Waive the unreturned loans of Ana Lima", False),
        ("Waive Ana Lima's loans that are not returned", False),
        ("Waive the returned loans of Ana Lima", True),
    ]:
        fitted = fit_intent(ONTOLOGY, planned, request, scope(ANA))
        assert PropertyFilter(property="returned", value=value) in fitted.intent.filters, request
        assert fitted.left_out == [], request
    # "not returned" is the condition, not a negation of the rest: the member is still added.
    dropped = fit_intent(ONTOLOGY, intent(), "Waive Ana Lima's loans that are not returned", scope(ANA))
    assert dropped.intent.related_name == "Ana Lima"
    # close sets returned = true: "close the loans as returned" states the effect, not a condition.
    closing = fit_intent(
        ONTOLOGY,
        intent("close", related_class="Member", related_name="Ana Lima"),
        "Close Ana Lima's loans as returned",
        scope(ANA),
    )
    assert closing.intent.filters == []


def test_a_related_entitys_property_narrows_through_the_class_the_request_speaks_of() -> None:
    """'loans of members in Porto' when Porto is both a member's city and a branch's city."""
    porto = [
        HeldName(mention="Porto", class_name=c, property="city", value="Porto", entities=3)
        for c in ("Member", "Branch")
    ]
    planned = intent(filters=[PropertyFilter(property="status", value="overdue")])
    fitted = fit_intent(ONTOLOGY, planned, "Waive the overdue loans of members in Porto", scope(*porto))
    assert fitted.intent.related_class == "Member" and fitted.intent.related_name == ""
    assert fitted.intent.related_filters == [PropertyFilter(property="city", value="Porto")]
    assert fitted.left_out == []
    unclear = fit_intent(ONTOLOGY, planned, "Waive the overdue loans in Porto", scope(*porto))
    assert unclear.intent == planned
    assert unclear.left_out == ["'Porto' (could be Branch.city or Member.city)"]


def test_names_the_plan_made_up_or_could_not_use_are_reported() -> None:
    invented = fit_intent(
        ONTOLOGY, intent(related_class="Member", related_name="Ana Lima"), "Waive all overdue loans", scope()
    )
    assert "the plan selects through Member 'Ana Lima', which the request does not name" in invented.left_out
    ids = fit_intent(
        ONTOLOGY,
        intent(entity_ids=["L-1", "L-9"]),
        "Waive loan L-1",
        scope(HeldName(mention="L-1", class_name="Loan", property="loan_id", value="L-1", entities=1, key="L-1")),
    )
    assert ids.left_out == ["the plan targets L-9, which the request does not name"]
    author = HeldName(
        mention="Jose Saramago", class_name="Author", property="name", value="Jose Saramago", entities=1, key="A-1"
    )
    unrelated = fit_intent(
        ONTOLOGY,
        intent(filters=[PropertyFilter(property="status", value="overdue")]),
        "Waive the overdue loans of books by Jose Saramago",
        scope(author),
    )
    assert unrelated.left_out == ["'Jose Saramago' (Author, not related to Loan)"]
    unknown = fit_intent(
        ONTOLOGY,
        intent(filters=[PropertyFilter(property="status", value="overdue")]),
        "Waive the overdue loans of Ana Lyma",
        scope(unheld=("Ana Lyma",)),
    )
    assert unknown.left_out == ["'Ana Lyma', which the graph does not hold as written"]
    loan = HeldName(mention="L-1", class_name="Loan", property="loan_id", value="L-1", entities=1, key="L-1")
    verb = fit_intent(ONTOLOGY, intent(entity_ids=["L-1"]), "Waive L-1", scope(loan, unheld=("Waive L-1",)))
    assert verb.left_out == []  # a capitalised verb before a name the graph holds is not a name of its own


def test_the_actions_own_account_and_a_parameters_text_are_used() -> None:
    fund = HeldName(
        mention="Hardship Fund", class_name="Fund", property="name", value="Hardship Fund", entities=1, key="F-1"
    )
    paid = fit_intent(
        ONTOLOGY,
        intent(related_class="Member", related_name="Ana Lima"),
        "Waive Ana Lima's loans from the Hardship Fund",
        scope(ANA, fund),
    )
    assert paid.left_out == [] and paid.added == []
    noted = fit_intent(
        ONTOLOGY,
        intent(
            "annotate",
            related_class="Member",
            related_name="Ana Lima",
            parameters={"note": "overdue since the Porto flood"},
        ),
        "Annotate Ana Lima's loans: overdue since the Porto flood",
        scope(ANA, HeldName(mention="Porto", class_name="Branch", property="city", value="Porto", entities=1)),
    )
    assert noted.left_out == [] and noted.intent.filters == []  # "overdue" is the note's text here


def test_numbers_and_dates_the_selection_ignores_are_reported() -> None:
    planned = intent(
        related_class="Member", related_name="Ana Lima", filters=[PropertyFilter(property="fee", op="gt", value=1000.0)]
    )
    assert fit_intent(ONTOLOGY, planned, "Waive Ana Lima's loans with fees over 1,000", scope(ANA)).left_out == []
    missed = fit_intent(
        ONTOLOGY,
        planned.model_copy(update={"filters": []}),
        "Waive Ana Lima's loans with fees over $1,000 opened before 2024-03-01",
        scope(ANA),
    )
    assert missed.left_out == ["the date 2024-03-01", "the number 1000"]
    assert stated_numbers("Waive loan L-12 and LN-7781 of 3 members", scope(unheld=("L-12", "LN-7781"))) == ["3"]


def test_a_related_name_no_entity_has_and_a_restated_parameter_are_dropped() -> None:
    """'Loans of members in Porto' planned with a member named "Porto"; a note restated as a condition."""
    porto = HeldName(mention="Porto", class_name="Member", property="city", value="Porto", entities=3)
    planned = intent(related_class="Member", related_name="Porto")
    unnamed = RequestScope(held=[porto], categories={"status": STATUSES}, related_name_entities=0)
    fitted = fit_intent(ONTOLOGY, planned, "Waive the loans of members in Porto", unnamed)
    assert (fitted.intent.related_name, fitted.intent.related_filters) == (
        "",
        [PropertyFilter(property="city", value="Porto")],
    )
    assert fitted.added[0] == "Dropped the Member name 'Porto': no Member is named so." and fitted.left_out == []
    named = RequestScope(held=[porto], categories={"status": STATUSES}, related_name_entities=1)
    assert fit_intent(ONTOLOGY, planned, "Waive the loans of members in Porto", named).intent.related_name == "Porto"

    note = "overdue since the flood"
    restated = intent(
        "annotate", entity_ids=["L-1"], parameters={"note": note}, filters=[PropertyFilter(property="note", value=note)]
    )
    loan = HeldName(mention="L-1", class_name="Loan", property="loan_id", value="L-1", entities=1, key="L-1")
    fitted = fit_intent(ONTOLOGY, restated, f"Annotate L-1: {note}", scope(loan))
    assert fitted.intent.filters == [] and fitted.left_out == []
    assert fitted.added == [
        f'Dropped the condition note = "{note}": it is what annotate writes, not which entities it changes.'
    ]


def test_a_value_to_write_must_be_stated_and_one_planned_as_a_condition_is_moved() -> None:
    loan = HeldName(mention="L-1", class_name="Loan", property="loan_id", value="L-1", entities=1, key="L-1")
    misplaced = intent(
        "annotate",
        entity_ids=["L-1"],
        parameters={"note": "late"},
        filters=[PropertyFilter(property="note", value="lost in transit")],
    )
    fitted = fit_intent(ONTOLOGY, misplaced, "Annotate L-1: lost in transit", scope(loan))
    assert fitted.intent.parameters == {"note": "lost in transit"} and fitted.intent.filters == []
    assert fitted.left_out == []
    invented = fit_intent(
        ONTOLOGY,
        intent("annotate", entity_ids=["L-1"], parameters={"note": "late"}),
        "Annotate L-1 with a note",
        scope(loan),
    )
    assert invented.left_out == ['the value note = "late", which the request does not state']
    assert stated_value("renew until 1 July 2024", "2024-07-01") and stated_value("fees over 1,000", 1000.0)
    assert not stated_value("renew until next year", "2027-07-01") and not stated_value("fees over 100", 1000)


def test_a_value_stated_as_the_goal_or_beside_named_ids_chooses_nothing() -> None:
    planned = intent(related_class="Member", related_name="Ana Lima")
    goal = fit_intent(ONTOLOGY, planned, "Set Ana Lima's loans to be closed", scope(ANA))
    assert goal.intent.filters == [] and goal.left_out == []
    loans = [
        HeldName(mention=i, class_name="Loan", property="loan_id", value=i, entities=1, key=i) for i in ("L-1", "L-2")
    ]
    ids = fit_intent(ONTOLOGY, intent(entity_ids=["L-1", "L-2"]), "Waive the overdue loans L-1 and L-2", scope(*loans))
    assert ids.intent.filters == [] and ids.left_out == []


def test_a_name_of_another_related_class_and_a_misplaced_category_value_go_where_they_belong() -> None:
    central = HeldName(
        mention="Central Library", class_name="Branch", property="name", value="Central Library", entities=1, key="B-1"
    )
    wrong_class = intent(related_class="Member", related_name="Central Library")
    fitted = fit_intent(
        ONTOLOGY,
        wrong_class,
        "Waive the loans of Central Library",
        RequestScope(held=[central], categories={"status": STATUSES}, related_name_entities=0),
    )
    assert (fitted.intent.related_class, fitted.intent.related_name) == ("Branch", "Central Library")
    assert fitted.left_out == []
    # "Porto" is a member's city, not a loan status: the loan-status condition moves to the member.
    porto = HeldName(mention="porto", class_name="Member", property="city", value="porto", entities=3)
    misplaced = intent(filters=[PropertyFilter(property="status", value="porto")])
    moved = fit_intent(ONTOLOGY, misplaced, "Waive the loans of members whose city is porto", scope(porto))
    assert moved.intent.filters == [] and moved.intent.related_filters == [
        PropertyFilter(property="city", value="porto")
    ]
    assert moved.left_out == []


def test_a_stated_value_the_plan_excludes_is_reported() -> None:
    planned = intent(
        related_class="Member",
        related_name="Ana Lima",
        filters=[PropertyFilter(property="status", op="ne", value="overdue")],
    )
    fitted = fit_intent(ONTOLOGY, planned, "Waive the overdue loans of Ana Lima", scope(ANA))
    assert fitted.left_out == ["status 'overdue': the request selects it and the plan excludes it"]
