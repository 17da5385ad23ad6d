"""The walks a question could mean (cypher/walk_space.py), read from the question once (questions/reading.py),
on small schemas of different shapes: each question's intended walk is among the few best, and every
candidate compiles to Cypher with every answer shape. What compiled programs return on a real graph is
tested in tests/integration/test_program_chooser.py."""

from __future__ import annotations

from dataclasses import replace

from contracts.query_path import EntityMatch, Grounding
from cypher.intent import ANSWERS, CONNECTED, KEYED, THROUGH, Anchor, Condition, Hop, Nodes, Rel, compile_intent
from cypher.walk_space import BEAM, CANDIDATES, Walk, candidate_walks, enumerate_walks
from questions.reading import read_question

OUT, IN = "outgoing", "incoming"

# Countries border each other and lie in regions; provinces belong to countries; cities lie in provinces.
GEOGRAPHY: tuple[Nodes, set[Rel]] = (
    {"Country": ["name", "area"], "Region": ["name"], "Province": ["name"], "City": ["name", "population"]},
    {
        ("Country", "BORDERS", "Country"),
        ("Country", "IN_REGION", "Region"),
        ("Country", "HAS_PROVINCE", "Province"),
        ("City", "LOCATED_IN", "Province"),
    },
)
# Suppliers supply products in categories; purchase orders are issued to suppliers and order products.
SUPPLY: tuple[Nodes, set[Rel]] = (
    {
        "Supplier": ["name"],
        "Product": ["name", "price"],
        "Category": ["name"],
        "PurchaseOrder": ["number", "total_amount"],
    },
    {
        ("Supplier", "SUPPLIES", "Product"),
        ("Product", "IN_CATEGORY", "Category"),
        ("PurchaseOrder", "ISSUED_TO", "Supplier"),
        ("PurchaseOrder", "ORDERS", "Product"),
    },
)
# People act in and direct films, know each other; films have genres.
FILM: tuple[Nodes, set[Rel]] = (
    {"Person": ["name", "born"], "Movie": ["title", "released"], "Genre": ["name"]},
    {
        ("Person", "ACTED_IN", "Movie"),
        ("Person", "DIRECTED", "Movie"),
        ("Person", "KNOWS", "Person"),
        ("Movie", "IN_GENRE", "Genre"),
    },
)


def grounded(*names: tuple[str, str, str]) -> Grounding:
    """The grounding of names found exactly: (name, label, property)."""
    return Grounding(
        matches=[
            EntityMatch(mention=name, label=label, property=key, value=name, how="exact") for name, label, key in names
        ]
    )


def walks_for(
    question: str, grounding: Grounding, schema: tuple[Nodes, set[Rel]], observed: list[tuple[str, ...]] | None = None
) -> list[Walk]:
    nodes, rels = schema
    return candidate_walks(read_question(question, grounding, nodes, rels), nodes, rels, observed or [])


def rank_of(walks: list[Walk], kind: str, start: Anchor, hops: tuple[Hop, ...], other: Anchor | None = None) -> int:
    """Where the walk stands among the candidates (0: first); fails when it is not there."""
    for i, walk in enumerate(walks):
        if (walk.kind, walk.intent.start, walk.intent.hops, walk.intent.other) == (kind, start, hops, other):
            return i
    raise AssertionError(f"{kind} {start} {hops} not among {[(w.kind, w.intent.hops) for w in walks]}")


def assert_all_compile(walks: list[Walk], schema: tuple[Nodes, set[Rel]]) -> None:
    """Every candidate compiles with every answer shape (a walk of no hops ranks nothing along it)."""
    nodes, rels = schema
    for walk in walks:
        for answer in ANSWERS:
            if (answer in CONNECTED and not walk.intent.hops) or answer == "path_length":
                continue  # a distance is a kind of its own (cypher/programs.py), between two named things
            condition = walk.intent.condition or Condition("name", "contains", "a")
            key = "name" if answer in KEYED else ""
            compile_intent(replace(walk.intent, condition=condition, answer=answer, answer_key=key), nodes, rels)


def test_a_relationship_named_twice_is_walked_twice() -> None:
    sweden = Anchor("Country", "name", "Sweden")
    walks = walks_for(
        "Which countries border the countries that border Sweden?", grounded(("Sweden", "Country", "name")), GEOGRAPHY
    )
    assert rank_of(walks, "walk", sweden, (Hop("BORDERS", OUT), Hop("BORDERS", OUT))) == 0
    assert rank_of(walks, "walk", sweden, (Hop("BORDERS", IN), Hop("BORDERS", IN))) < CANDIDATES
    assert len(walks) == CANDIDATES
    assert_all_compile(walks, GEOGRAPHY)


def test_two_relationships_in_the_questions_order() -> None:
    sweden = Anchor("Country", "name", "Sweden")
    walks = walks_for(
        "Which regions are the countries bordering Sweden in?", grounded(("Sweden", "Country", "name")), GEOGRAPHY
    )
    assert rank_of(walks, "walk", sweden, (Hop("BORDERS", OUT), Hop("IN_REGION", OUT))) == 0
    assert rank_of(walks, "walk", sweden, (Hop("IN_REGION", OUT),)) < CANDIDATES  # the shorter reading, still shown
    assert_all_compile(walks, GEOGRAPHY)


def test_a_hop_against_the_arrow() -> None:
    skane = Anchor("Province", "name", "Skane")
    walks = walks_for(
        "Which country does the province Skane belong to?", grounded(("Skane", "Province", "name")), GEOGRAPHY
    )
    assert rank_of(walks, "walk", skane, (Hop("HAS_PROVINCE", IN),)) == 0
    city = walks_for("Which country is the city Lund in?", grounded(("Lund", "City", "name")), GEOGRAPHY)
    lund = Anchor("City", "name", "Lund")
    assert rank_of(city, "walk", lund, (Hop("LOCATED_IN", OUT), Hop("HAS_PROVINCE", IN))) < 3
    assert_all_compile(walks + city, GEOGRAPHY)


def test_what_two_named_things_share_and_what_one_has_alone() -> None:
    acme, globex = Anchor("Supplier", "name", "Acme"), Anchor("Supplier", "name", "Globex")
    names = grounded(("Acme", "Supplier", "name"), ("Globex", "Supplier", "name"))
    shared = walks_for("Which products does Acme supply that Globex also supplies?", names, SUPPLY)
    assert rank_of(shared, "shared", acme, (Hop("SUPPLIES", OUT),), globex) == 0
    alone = walks_for("Which products does Acme supply that Globex does not supply?", names, SUPPLY)
    assert rank_of(alone, "excluded", acme, (Hop("SUPPLIES", OUT),), globex) < 3
    assert rank_of(alone, "excluded", globex, (Hop("SUPPLIES", OUT),), acme) < CANDIDATES  # the other way round
    categories = walks_for("Which categories do both Acme and Globex supply products in?", names, SUPPLY)
    assert rank_of(categories, "shared", acme, (Hop("SUPPLIES", OUT), Hop("IN_CATEGORY", OUT)), globex) < 3
    assert_all_compile(shared + alone + categories, SUPPLY)


def test_what_two_named_things_reach_by_walks_of_their_own() -> None:
    # the countries in Europe, reached from it one way, that the euro reaches another way (or does not)
    europe, euro = Anchor("Region", "name", "Europe"), Anchor("Currency", "name", "Euro")
    names = grounded(("Europe", "Region", "name"), ("Euro", "Currency", "name"))
    nodes, rels = MONEY_MAP
    met = walks_for("Which countries in Europe use the Euro?", names, MONEY_MAP)
    first = met[0]
    assert (first.kind, first.intent.start, first.intent.other) == ("met", europe, euro)
    assert first.intent.hops == (Hop("IN_REGION", IN),)
    assert first.intent.other_hops == (Hop("USES_CURRENCY", IN),)
    query = compile_intent(replace(first.intent, answer="names"), nodes, rels)
    assert "(o:`Currency` {`name`: 'Euro'})<-[:`USES_CURRENCY`]-(b:`Country`)" in query
    unmet = walks_for("Which countries in Europe do not use the Euro?", names, MONEY_MAP)
    assert rank_of(unmet, "unmet", europe, (Hop("IN_REGION", IN),), euro) < 3
    assert_all_compile(met + unmet, MONEY_MAP)


def test_a_connection_the_data_holds_ranks_first() -> None:
    hanks, howard = Anchor("Person", "name", "Tom Hanks"), Anchor("Person", "name", "Ron Howard")
    names = grounded(("Tom Hanks", "Person", "name"), ("Ron Howard", "Person", "name"))
    question = "How are Tom Hanks and Ron Howard connected?"
    held = walks_for(question, names, FILM, observed=[("ACTED_IN", "DIRECTED")])
    assert rank_of(held, "connection", hanks, (Hop("ACTED_IN", OUT), Hop("DIRECTED", IN)), howard) == 0
    assert held[0].intent.combine == THROUGH  # the walk ends at the other, answered by what it passes through
    nodes, rels = FILM
    schema_only = enumerate_walks(read_question(question, names, nodes, rels), nodes, rels)
    both_acted = (Hop("ACTED_IN", OUT), Hop("ACTED_IN", IN))
    assert rank_of(schema_only, "connection", hanks, both_acted, howard) >= 0  # enumerated; "connected" ranks it
    # one relationship passes through nothing: no connection of one hop is a candidate
    assert all(len(w.intent.hops) > 1 for w in held if w.kind == "connection")
    assert_all_compile(held, FILM)


def test_a_connection_across_labels() -> None:
    acme, tools = Anchor("Supplier", "name", "Acme"), Anchor("Category", "name", "Tools")
    names = grounded(("Acme", "Supplier", "name"), ("Tools", "Category", "name"))
    walks = walks_for("How is Acme connected to Tools?", names, SUPPLY)
    assert rank_of(walks, "connection", acme, (Hop("SUPPLIES", OUT), Hop("IN_CATEGORY", OUT)), tools) < 3
    assert not any(w.kind in ("shared", "excluded") for w in walks)  # the two reach nothing the same way
    assert_all_compile(walks, SUPPLY)


def test_with_nothing_named_every_node_of_a_label_is_a_start() -> None:
    walks = walks_for("Which person acted in the most movies?", Grounding(), FILM)
    assert rank_of(walks, "walk", Anchor("Person"), (Hop("ACTED_IN", OUT),)) < 3
    genres = walks_for("Which genre has the most movies?", Grounding(), FILM)
    assert rank_of(genres, "walk", Anchor("Genre"), (Hop("IN_GENRE", IN),)) < 3
    largest = walks_for("Which city has the largest population?", Grounding(), GEOGRAPHY)
    assert rank_of(largest, "walk", Anchor("City"), ()) == 0  # the city itself, ranked by a property
    assert_all_compile(walks + genres, FILM)
    assert_all_compile(largest, GEOGRAPHY)


def test_the_order_is_the_same_on_every_run() -> None:
    names = grounded(("Acme", "Supplier", "name"), ("Globex", "Supplier", "name"))
    question = "Which products does Acme supply that Globex also supplies?"
    nodes, rels = SUPPLY
    first = enumerate_walks(read_question(question, names, nodes, rels), nodes, rels)
    again = enumerate_walks(read_question(question, names, nodes, set(sorted(rels, reverse=True))), nodes, rels)
    assert first == again


def _dense_schema() -> tuple[Nodes, set[Rel]]:
    """30 labels and 60 relationships, a third of them at one hub, over six relationship types: a schema
    whose walks of three hops number in the tens of thousands."""
    labels = [f"Kind{i}" for i in range(30)]
    rels: set[Rel] = set()
    for i in range(20):
        rels.add(("Kind0", f"REL_{i % 6}", labels[1 + i]))
    i = 0
    while len(rels) < 60:
        rels.add((labels[1 + i % 29], f"REL_{i % 6}", labels[1 + (i * 7 + 3) % 29]))
        i += 1
    return {label: ["name", "size"] for label in labels}, rels


def test_the_enumeration_stays_bounded_on_a_large_schema() -> None:
    nodes, rels = _dense_schema()
    unnamed = read_question("Which kind1 has the most kind2?", Grounding(), nodes, rels)
    considered = enumerate_walks(unnamed, nodes, rels)
    assert BEAM < len(considered) <= len(nodes) + 3 * BEAM  # the beam cut it, and at its bound
    two = grounded(("Alpha", "Kind0", "name"), ("Beta", "Kind5", "name"))
    named = read_question("How is Alpha connected to Beta?", two, nodes, rels)
    considered = enumerate_walks(named, nodes, rels, observed=[("REL_4", "REL_4")])
    # the walks from each, the shared and excluded from the first, the excluded from the second, the connections
    assert len(considered) <= 2 + 3 * BEAM * (1 + 2 + 1 + 1) + 8
    best = candidate_walks(named, nodes, rels)
    assert len(best) == CANDIDATES
    assert_all_compile(best, (nodes, rels))


# Territories use currencies now and used others before: two relationships join the same two labels.
MONEY: tuple[Nodes, set[Rel]] = (
    {"Territory": ["name"], "Currency": ["name", "code"]},
    {("Territory", "USES_CURRENCY", "Currency"), ("Territory", "FORMERLY_USED_CURRENCY", "Currency")},
)


# Countries lie in regions and use currencies.
MONEY_MAP: tuple[Nodes, set[Rel]] = (
    {"Country": ["name"], "Region": ["name"], "Currency": ["name"]},
    {("Country", "IN_REGION", "Region"), ("Country", "USES_CURRENCY", "Currency"), ("Country", "BORDERS", "Country")},
)


def test_of_two_relationships_joining_the_same_labels_the_one_the_question_says_comes_first() -> None:
    lesotho = Anchor("Territory", "name", "Lesotho")
    grounding = grounded(("Lesotho", "Territory", "name"))
    uses, formerly = (Hop("USES_CURRENCY", OUT),), (Hop("FORMERLY_USED_CURRENCY", OUT),)
    used = walks_for("Which currencies are used in Lesotho?", grounding, MONEY)  # "used" says "uses" too
    assert rank_of(used, "walk", lesotho, uses) < rank_of(used, "walk", lesotho, formerly)
    before = walks_for("Which currencies were formerly used in Lesotho?", grounding, MONEY)
    assert rank_of(before, "walk", lesotho, formerly) < rank_of(before, "walk", lesotho, uses)


def test_one_word_accounts_for_one_hop_of_a_walk() -> None:
    # "used" hints both relationships; a walk along both is not said twice over, so the walk of one hop leads
    franc = Anchor("Currency", "name", "Swiss Franc")
    grounding = grounded(("Swiss Franc", "Currency", "name"))
    walks = walks_for("Which territories is the Swiss Franc used in?", grounding, MONEY)
    one = (Hop("USES_CURRENCY", IN),)
    both = (Hop("FORMERLY_USED_CURRENCY", IN), Hop("USES_CURRENCY", OUT), Hop("USES_CURRENCY", IN))
    assert rank_of(walks, "walk", franc, one) < rank_of(walks, "walk", franc, both)
