"""What the planner is told about how the schema joins a question's names (questions.schema_routes)."""

from __future__ import annotations

from contracts.query_path import EntityMatch, Grounding
from questions.schema_routes import connections, named_relationships

LABELS = ["Town", "Region", "Nation", "Coin", "Person"]
RELS = {
    ("Town", "IN_REGION", "Region"),
    ("Region", "PART_OF", "Nation"),
    ("Nation", "PAYS_WITH", "Coin"),
    ("Nation", "BORDERS", "Nation"),
    ("Person", "KNOWS", "Person"),
}


def found(*entities: tuple[str, str], how: str = "exact") -> Grounding:
    return Grounding(
        matches=[
            EntityMatch(mention=value, label=label, property="name", value=value, how=how) for label, value in entities
        ]
    )


def test_the_route_from_a_named_thing_to_the_kind_asked_for_follows_the_stored_directions() -> None:
    lines = connections("Which coin is used where Springfield lies?", found(("Town", "Springfield")), LABELS, RELS)
    assert (
        "- Town 'Springfield' to the Coin asked for: "
        "(:Town)-[:IN_REGION]->(:Region)-[:PART_OF]->(:Nation)-[:PAYS_WITH]->(:Coin)" in lines
    )
    assert lines[0].startswith("How the schema joins them")


def test_two_named_things_are_joined_by_the_shortest_route_between_their_labels() -> None:
    lines = connections(
        "How are Springfield and Freedonia connected?",
        found(("Town", "Springfield"), ("Nation", "Freedonia")),
        LABELS,
        RELS,
    )
    assert "- Town 'Springfield' and Nation 'Freedonia': (:Town)-[:IN_REGION]->(:Region)-[:PART_OF]->(:Nation)" in lines


def test_two_things_of_one_label_are_joined_by_that_labels_own_relationships() -> None:
    lines = connections(
        "Through whom are Ann and Bob linked?", found(("Person", "Ann"), ("Person", "Bob")), LABELS, RELS
    )
    assert "- Person 'Ann' and Person 'Bob': (:Person)-[:KNOWS]->(:Person)" in lines


def test_relationships_the_question_writes_in_its_words_are_listed_with_their_direction() -> None:
    assert named_relationships("Which coins does a nation that borders Freedonia pay with?", RELS) == [
        ("Nation", "BORDERS", "Nation"),
        ("Nation", "PAYS_WITH", "Coin"),
    ]
    assert named_relationships("Which coin does Freedonia use?", RELS) == []  # no type's every word


def test_a_name_found_only_by_a_shared_word_is_not_routed_from() -> None:
    # "Springfield Heights" found only as "Springfield": another thing, so no route is claimed for it.
    grounding = Grounding(
        matches=[
            EntityMatch(mention="Springfield Heights", label="Town", property="name", value="Old Heights", how="words")
        ]
    )
    assert connections("Which coin is used in Springfield Heights?", grounding, LABELS, RELS) == []


def test_nothing_is_said_when_nothing_is_named_or_asked() -> None:
    assert connections("How many towns are there?", Grounding(), LABELS, RELS) == []
