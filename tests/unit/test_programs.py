"""Whole programs a question could mean (cypher/programs.py): walks with answer shapes, keys and conditions,
ranked by evidence, on small schemas of different shapes. The program the question means comes first; every
program shown compiles. What programs return on a real graph is tested in tests/integration/test_program_chooser.py;
how often the first is right on public graphs is measured by bench/walk_recall.py."""

from __future__ import annotations

from contracts.query_path import EntityMatch, Grounding
from cypher.intent import THROUGH, Anchor, Condition, Contrast, CountTest, Hop, Lack, Nodes, Rel
from cypher.programs import PROGRAMS, Program, programs
from questions.reading import read_question
from tests.unit.test_walk_space import FILM, GEOGRAPHY, IN, OUT, SUPPLY, grounded


def best(question: str, grounding: Grounding, schema: tuple[Nodes, set[Rel]]) -> list[Program]:
    nodes, rels = schema
    reading = read_question(question, grounding, nodes, rels)
    return programs(reading, reading.shape, nodes, rels)


ACME, GLOBEX = Anchor("Supplier", "name", "Acme"), Anchor("Supplier", "name", "Globex")
TWO_SUPPLIERS = grounded(("Acme", "Supplier", "name"), ("Globex", "Supplier", "name"))


def test_what_both_have_what_one_lacks_and_what_joins_them() -> None:
    shared = best("Which products do Acme and Globex both supply?", TWO_SUPPLIERS, SUPPLY)[0]
    assert (shared.walk.kind, shared.intent.combine, shared.intent.hops) == (
        "shared",
        "also_reached_from_other",
        (Hop("SUPPLIES", OUT),),
    )
    alone = best("Which products does Acme supply that Globex does not?", TWO_SUPPLIERS, SUPPLY)[0]
    assert alone.walk.kind == "excluded" and alone.intent.start == ACME and alone.intent.other == GLOBEX
    joined = best("Which product connects Acme and Globex?", TWO_SUPPLIERS, SUPPLY)[0]
    assert joined.intent.combine == THROUGH and joined.intent.answer == "names"
    assert joined.intent.hops == (Hop("SUPPLIES", OUT), Hop("SUPPLIES", IN))


def test_the_relationships_between_two_named_things() -> None:
    first = best("How many relationships lie on the shortest path between Acme and Globex?", TWO_SUPPLIERS, SUPPLY)
    assert first[0].intent.answer == "path_length" and "min(length(p))" in first[0].query


def test_a_total_of_the_property_the_question_names() -> None:
    sweden = grounded(("Sweden", "Country", "name"))
    total = best("What is the total area of the countries bordering Sweden?", sweden, GEOGRAPHY)[0]
    assert (total.intent.answer, total.intent.answer_key) == ("sum", "area")
    assert total.intent.hops == (Hop("BORDERS", OUT),)


def test_a_condition_from_the_figure_the_question_compares() -> None:
    listed = best("List the countries whose area is greater than 5000.", Grounding(), GEOGRAPHY)[0]
    assert listed.intent.start == Anchor("Country") and listed.intent.hops == ()
    assert listed.intent.condition == Condition("area", ">", "5000") and listed.intent.answer == "names"


def test_a_ranking_by_what_each_reaches_starts_at_the_kind_asked_for() -> None:
    ranked = best("Which genre has the most movies?", Grounding(), FILM)[0]
    assert ranked.intent.answer == "most_connected"
    assert ranked.intent.start == Anchor("Genre") and ranked.intent.hops == (Hop("IN_GENRE", IN),)


def test_a_named_things_property_is_read_not_its_name() -> None:
    area = best("What is the area of Sweden?", grounded(("Sweden", "Country", "name")), GEOGRAPHY)[0]
    assert (area.intent.answer, area.intent.answer_key, area.intent.hops) == ("value", "area", ())


def test_every_program_shown_compiles_and_there_are_at_most_programs() -> None:
    shown = best("Which products do Acme and Globex both supply?", TWO_SUPPLIERS, SUPPLY)
    assert 0 < len(shown) <= PROGRAMS and all(p.query.startswith("MATCH") for p in shown)
    assert len({p.query for p in shown}) == len(shown)  # no program shown twice


def test_a_figure_that_counts_things_tests_how_many_each_reaches() -> None:
    first = best("Which countries have at least 2 provinces?", Grounding(), GEOGRAPHY)[0]
    assert first.intent.start == Anchor("Country") and first.intent.hops == (Hop("HAS_PROVINCE", OUT),)
    assert first.intent.count_test == CountTest(0, ">=", "2") and first.intent.condition is None
    assert "WITH a, count(DISTINCT b) AS reached WHERE reached >= 2" in first.query
    # grouped where the kind asked for stands on the walk, past a named start
    grouped = best(
        "Which provinces of Sweden have more than 10 cities?", grounded(("Sweden", "Country", "name")), GEOGRAPHY
    )
    assert grouped[0].intent.count_test == CountTest(1, ">", "10")
    assert grouped[0].intent.hops == (Hop("HAS_PROVINCE", OUT), Hop("LOCATED_IN", IN))


def test_how_many_things_pass_a_count_test_counts_the_groups() -> None:
    first = best("How many countries have at least 2 provinces?", Grounding(), GEOGRAPHY)[0]
    assert first.intent.count_test == CountTest(0, ">=", "2") and first.intent.answer == "count"
    assert first.query.endswith("WHERE reached >= 2 RETURN count(a) AS `Country_count`")


def test_a_figure_that_counts_things_is_no_condition_on_their_keys() -> None:
    first = best("Which countries border just one other country?", Grounding(), GEOGRAPHY)[0]
    assert first.intent.count_test == CountTest(0, "=", "1") and first.intent.condition is None


def test_a_ranking_of_the_kind_asked_by_a_total_of_what_each_reaches() -> None:
    first = best("Which supplier was issued purchase orders of the highest total amount?", Grounding(), SUPPLY)[0]
    assert (first.intent.answer, first.intent.answer_key) == ("most_total", "total_amount")
    assert first.intent.start == Anchor("Supplier") and first.intent.hops[0] == Hop("ISSUED_TO", IN)
    assert "WITH a, sum(b.`total_amount`) AS measure" in first.query
    # a key the kind asked for holds itself is its own measure, no total over what it reaches
    own = best("Name the country with the lowest area.", Grounding(), GEOGRAPHY)[0]
    assert (own.intent.answer, own.intent.hops) == ("lowest", ())


def test_a_figure_of_a_property_stays_a_condition_on_it() -> None:
    first = best("Which cities have a population over 2 million?", Grounding(), GEOGRAPHY)[0]
    assert first.intent.condition == Condition("population", ">", "2000000") and first.intent.count_test is None


def test_what_lacks_a_relationship_the_question_denies() -> None:
    unsupplied = best("Which products does no supplier supply?", Grounding(), SUPPLY)[0]
    assert unsupplied.intent.start == Anchor("Product") and unsupplied.intent.hops == ()
    assert unsupplied.intent.lacks == Lack(Hop("SUPPLIES", IN), "Supplier")
    assert "NOT (a)<-[:`SUPPLIES`]-(:`Supplier`)" in unsupplied.query
    lonely = best("Which countries border no other country?", Grounding(), GEOGRAPHY)[0]
    assert lonely.intent.hops == () and lonely.intent.lacks is not None
    assert lonely.intent.lacks.hop.relationship == "BORDERS"


def test_what_does_not_reach_one_named_thing() -> None:
    acme = grounded(("Acme", "Supplier", "name"))
    first = best(
        "Which products in the category Tools are not supplied by Acme?",
        grounded(("Tools", "Category", "name"), ("Acme", "Supplier", "name")),
        SUPPLY,
    )[0]
    assert first.intent.start == Anchor("Category", "name", "Tools")
    assert first.intent.lacks == Lack(Hop("SUPPLIES", IN), "Supplier", Anchor("Supplier", "name", "Acme"))
    assert "NOT (b)<-[:`SUPPLIES`]-(:`Supplier` {`name`: 'Acme'})" in first.query
    assert acme.matches  # the grounding helper is shared


TWO_COUNTRIES = grounded(("Sweden", "Country", "name"), ("Norway", "Country", "name"))
SWEDEN, NORWAY = Anchor("Country", "name", "Sweden"), Anchor("Country", "name", "Norway")


def test_which_of_two_named_things_wins_on_the_property_named() -> None:
    first = best("Which has a larger area, Sweden or Norway?", TWO_COUNTRIES, GEOGRAPHY)[0]
    assert first.walk.kind == "contrast" and (first.intent.answer, first.intent.answer_key) == ("value", "area")
    assert (first.intent.start, first.intent.other) == (SWEDEN, NORWAY)
    assert first.intent.contrast == Contrast(whether=False, higher=True)
    assert "UNWIND pairs AS pair" in first.query  # each of the two with its measure, the winner (or both) kept


def test_whether_the_first_beats_the_second_by_how_many_each_reaches() -> None:
    first = best("Does Sweden have more provinces than Norway?", TWO_COUNTRIES, GEOGRAPHY)[0]
    assert first.intent.contrast == Contrast(whether=True, higher=True)
    assert first.intent.answer == "count" and first.intent.hops == (Hop("HAS_PROVINCE", OUT),)
    assert "THEN 'yes' ELSE 'no' END AS answer" in first.query
    fewer = best("Does Sweden have fewer provinces than Norway?", TWO_COUNTRIES, GEOGRAPHY)[0]
    assert fewer.intent.contrast == Contrast(whether=True, higher=False)


def test_an_adjective_compares_a_property_never_a_count() -> None:
    ranked = best("Is Sweden bigger than Norway?", TWO_COUNTRIES, GEOGRAPHY)
    contrasts = [p for p in ranked if p.walk.kind == "contrast"]
    assert ranked[0].walk.kind == "contrast" and all(not p.intent.hops for p in contrasts)
    assert {p.intent.answer_key for p in contrasts} == {"area"}  # its name is no measure


def test_before_compares_a_point_in_time() -> None:
    films = grounded(("Alien", "Movie", "title"), ("Heat", "Movie", "title"))
    first = best("Was Alien released before Heat?", films, FILM)[0]
    assert first.intent.answer_key == "released" and first.intent.contrast == Contrast(whether=True, higher=False)


def test_a_threshold_is_no_contrast() -> None:
    listed = best("Which countries have more than 3 provinces?", Grounding(), GEOGRAPHY)
    assert all(p.walk.kind != "contrast" for p in listed)


def test_a_yes_or_no_about_two_named_things_asks_whether_a_walk_joins_them() -> None:
    first = best("Does Sweden border Norway?", TWO_COUNTRIES, GEOGRAPHY)[0]
    assert first.intent.answer == "whether" and first.intent.combine == THROUGH
    assert first.intent.hops == (Hop("BORDERS", OUT),)
    assert "THEN 'yes' ELSE 'no' END AS answer" in first.query
    shared = best("Is Sweden in the same region as Norway?", TWO_COUNTRIES, GEOGRAPHY)[0]
    assert (shared.intent.answer, shared.intent.combine) == ("whether", "also_reached_from_other")
    assert shared.intent.hops == (Hop("IN_REGION", OUT),)
    listed = best("Which countries border Sweden?", grounded(("Sweden", "Country", "name")), GEOGRAPHY)
    assert all(p.intent.answer != "whether" for p in listed)  # asked which, not whether


def test_a_thing_named_by_another_key_is_answered_by_its_name() -> None:
    coded = Grounding(matches=[EntityMatch(mention="SE", label="Country", property="iso2", value="SE", how="exact")])
    nodes, rels = GEOGRAPHY
    schema = ({**nodes, "Country": ["name", "iso2", "area"]}, rels)
    first = best("Which country goes by SE?", coded, schema)[0]
    assert first.intent.hops == () and first.intent.answer == "names"  # its name, not its neighbours'
    assert first.intent.start == Anchor("Country", "iso2", "SE")


# The relationships' own properties: what an actor was paid for a film, how long two people have known each other.
FILM_KEYS = {"ACTED_IN": ["fee", "released"], "KNOWS": ["years"]}  # "released" as the movie's too


def keyed_best(question: str, grounding: Grounding) -> Program:
    nodes, rels = FILM
    reading = read_question(question, grounding, nodes, rels, FILM_KEYS)
    return programs(reading, reading.shape, nodes, rels, rel_keys=FILM_KEYS)[0]


def test_a_key_of_the_relationship_followed_is_read_and_tested_on_it() -> None:
    keanu = grounded(("Keanu", "Person", "name"))
    total = keyed_best("What is the total fee Keanu was paid for the movies he acted in?", keanu)
    assert (total.intent.answer, total.intent.answer_key, total.intent.relationship_key) == ("sum", "fee", True)
    assert "-[r:`ACTED_IN`]->" in total.query and "sum(r.`fee`)" in total.query
    assert "WITH DISTINCT b, r" in total.query  # each relationship once, not each movie once
    tested = keyed_best("Which movies was Keanu paid a fee of more than 100 for?", keanu)
    assert tested.intent.condition == Condition("fee", ">", "100", on_relationship=True)
    assert "r.`fee` > 100" in tested.query and tested.intent.answer == "names"


def test_the_relationship_joining_two_named_things_is_read_either_way() -> None:
    two = grounded(("Ann", "Person", "name"), ("Dan", "Person", "name"))
    between = keyed_best("How many years have Ann and Dan known each other?", two)
    assert between.intent.combine == THROUGH and between.intent.relationship_key
    assert "-[r:`KNOWS`]-(b:`Person`)" in between.query and "r.`years`" in between.query  # stored one way


def test_a_key_a_node_on_the_walk_holds_is_the_nodes_not_the_relationships() -> None:
    keanu = grounded(("Keanu", "Person", "name"))
    released = keyed_best("Which movies released after 2000 did Keanu act in?", keanu)
    assert released.intent.condition == Condition("released", ">", "2000")
    assert "b.`released` > 2000" in released.query and "r.`released`" not in released.query


def test_an_average_per_node_of_what_each_reaches_counts_what_how_many_names() -> None:
    average = best("On average, how many movies is a genre given to?", Grounding(), FILM)[0]
    assert average.intent.answer == "average_reached" and average.intent.start == Anchor("Genre")
    assert average.intent.hops == (Hop("IN_GENRE", IN),)
    assert "OPTIONAL MATCH" in average.query and "avg(reached)" in average.query  # a genre with none counts 0
