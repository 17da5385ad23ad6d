"""A question read once against its grounding and the schema (questions/reading.py): the things it names as
the graph stores them, its figures and quoted values, the label asked for, the relationships and labels its
words spell out or hint at, and the words left."""

from __future__ import annotations

from contracts.query_path import EntityMatch, Grounding
from cypher.intent import Anchor, Nodes, Rel
from questions.reading import read_question

NODES: Nodes = {"Country": ["name", "area"], "Region": ["name"], "Province": ["name", "status"]}
RELS: set[Rel] = {
    ("Country", "BORDERS", "Country"),
    ("Country", "IN_REGION", "Region"),
    ("Country", "HAS_PROVINCE", "Province"),
}


def test_the_names_are_the_graphs_and_the_question_without_them_is_read() -> None:
    grounding = Grounding(
        matches=[
            EntityMatch(mention="sweden", label="Country", property="name", value="Sweden", how="exact"),
            # only shares a word: another thing's name, never walked from
            EntityMatch(mention="Nordic Union", label="Region", property="name", value="Nordic Council", how="words"),
        ],
        unmatched=["Atlantis"],
    )
    reading = read_question("Which regions are the countries bordering sweden in?", grounding, NODES, RELS)
    assert reading.named == (Anchor("Country", "name", "Sweden"),)
    assert reading.unmatched == ("Atlantis",)
    assert reading.asked == "Region"
    assert reading.labels == ("Country", "Region")
    assert reading.relationships == ()  # "bordering" spells no relationship out ...
    assert "BORDERS" in reading.hinted  # ... but hints at one
    # "regions" is the label's own word: it hints the label, not the relationship types named after it
    assert "Region" in reading.hinted and "IN_REGION" not in reading.hinted
    assert "sweden" not in reading.words and "bordering" in reading.words


def test_relationships_spelled_out_keep_their_order_and_repeats() -> None:
    grounding = Grounding(
        matches=[EntityMatch(mention="Peru", label="Country", property="name", value="Peru", how="exact")]
    )
    reading = read_question("From Peru, follow borders, then borders, then in region", grounding, NODES, RELS)
    assert reading.relationships == ("BORDERS", "BORDERS", "IN_REGION")


def test_figures_and_quoted_values_apart_from_names() -> None:
    grounding = Grounding(
        matches=[EntityMatch(mention="Route 66", label="Region", property="name", value="Route 66", how="exact")]
    )
    reading = read_question(
        "Which provinces with status 'open' in Route 66 have an area above 5,000?", grounding, NODES, RELS
    )
    assert reading.figures == ("5000",)  # not the 66 of a name
    assert reading.quoted == ("open",)
    assert reading.asked == "Province"
    possessive = read_question("Which of Sweden's provinces are in Peru's region?", Grounding(), NODES, RELS)
    assert possessive.quoted == ()  # apostrophes inside words quote nothing


def test_a_question_naming_nothing_reads_empty_names() -> None:
    reading = read_question("How many countries are there?", Grounding(), NODES, RELS)
    assert reading.named == () and reading.asked == "Country" and reading.labels == ("Country",)
    assert reading.shape.answers[0] == "count"
    assert "Country" not in read_question("Count the regions", Grounding(), NODES, RELS).hinted  # "count" is no stem


def test_a_value_two_kinds_hold_is_the_one_the_words_before_it_say() -> None:
    nodes: Nodes = {"Supplier": ["name", "country"], "Warehouse": ["name", "country"], "Order": ["number"]}
    rels: set[Rel] = {("Order", "DELIVER_TO", "Warehouse"), ("Order", "ISSUED_TO", "Supplier")}
    both = Grounding(
        matches=[
            EntityMatch(mention="Germany", label=label, property="country", value="Germany", how="exact")
            for label in ("Supplier", "Warehouse")
        ]
    )
    placed = read_question("Total value of orders delivered to warehouses in Germany?", both, nodes, rels)
    assert placed.named == (Anchor("Warehouse", "country", "Germany"),)
    unplaced = read_question("What is the total value of orders from Germany?", both, nodes, rels)
    assert unplaced.named == (Anchor("Supplier", "country", "Germany"),)  # the first, as found


def test_a_short_verb_hints_the_relationship_named_after_it_as_said() -> None:
    nodes: Nodes = {"Country": ["name"], "Currency": ["code"]}
    rels: set[Rel] = {("Country", "USES_CURRENCY", "Currency"), ("Country", "BORDERS", "Country")}
    for question in ("Which countries use the euro?", "Which currency does Peru use?", "Peru uses which currency?"):
        reading = read_question(question, Grounding(matches=[], unmatched=[]), nodes, rels)
        assert "USES_CURRENCY" in reading.hinted, question
    # "us" is no "use": a word too short to be a verb's form hints nothing
    told = read_question("Tell us the currencies", Grounding(matches=[], unmatched=[]), nodes, rels)
    assert "USES_CURRENCY" not in told.hinted


def test_two_names_set_against_each_other_are_read_as_one_kind_where_they_can_be() -> None:
    # "Georgia" is a country and a province; "Ohio" only a province
    grounding = Grounding(
        matches=[
            EntityMatch(mention="Ohio", label="Province", property="name", value="Ohio", how="exact"),
            EntityMatch(mention="Georgia", label="Country", property="name", value="Georgia", how="exact"),
            EntityMatch(mention="Georgia", label="Province", property="name", value="Georgia", how="exact"),
        ]
    )
    contrasted = read_question("Does Ohio have a larger area than Georgia?", grounding, NODES, RELS)
    assert contrasted.named == (Anchor("Province", "name", "Ohio"), Anchor("Province", "name", "Georgia"))
    # not set against each other: the first reading of each name stands
    listed = read_question("Which regions are Ohio and Georgia in?", grounding, NODES, RELS)
    assert listed.named == (Anchor("Province", "name", "Ohio"), Anchor("Country", "name", "Georgia"))
