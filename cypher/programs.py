"""Whole programs a question could mean: each enumerated walk (cypher/walk_space.py) with each answer shape the
question's words allow (questions/answer_shape.py), the property it is read from and a condition on a figure
the question gives; with two named things, also the number of relationships between them. Ranked by the walk's
evidence plus the shape's, each compiled by the query form's compiler (cypher/intent.py), so every program is a
query the schema allows. Code proposes and ranks these; the planning activity takes the first (`graph_programs`),
and tools/program_chooser.py lets a model choose among the first few, for measurement.

Nothing here knows a graph or a domain. Pure functions."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from cypher.intent import (
    AVERAGE_REACHED,
    COMMON,
    CONNECTED,
    COUNTING_COMPARATIVES,
    KEYED,
    TOTALS,
    WHETHER,
    Anchor,
    Condition,
    Contrast,
    CountTest,
    IntentError,
    Lack,
    Nodes,
    QueryIntent,
    Rel,
    compile_intent,
    identifying_key,
    is_time_point,
)
from cypher.walk_space import ASKED, EVERY_NAMED, LabelSet, Reading, Walk, enumerate_walks


class AnswerShape(Protocol):
    """What the programs read of the answer asked for: questions/answer_shape.py's AnswerShape."""

    @property
    def answers(self) -> tuple[str, ...]: ...
    @property
    def keys(self) -> tuple[str, ...]: ...
    @property
    def comparison(self) -> tuple[str, str] | None: ...
    @property
    def combines(self) -> tuple[str, ...]: ...
    @property
    def meant(self) -> tuple[str, ...]: ...
    @property
    def counted(self) -> str: ...
    @property
    def negated(self) -> bool: ...
    @property
    def contrast(self) -> Contrast | None: ...
    @property
    def contrasted_by(self) -> str: ...
    @property
    def whether(self) -> bool: ...
    @property
    def top(self) -> int: ...
    @property
    def stated(self) -> tuple[tuple[str, str], ...]: ...


PROGRAMS = 12  # programs a model is shown
WALKS = 120  # the best walks combined with answer shapes: the rest rank too low to be shown
# Evidence weights, on the walk's own scale (cypher/walk_space.py).
SHAPE_FIRST = 4  # the shape the words most likely ask for
SHAPE_SECOND = 2
KEY_NAMED = 0  # a condition on a property the question names (no more than none)
# A keyed shape read from a property the question names: it asks for that property ("how well is it rated",
# said as "rating"), which a walk to names does not answer (on hand-written questions 3 of 129 more right).
KEY_READ = 3
KEY_GUESSED = -3  # ... from one it does not name (any key of the node reached)
KEY_MEANT = 1  # ... from the one key the whole sentence means (questions/meant_keys.py)
# The relationships between two named things, when the words ask how many lie between them: a reading that
# specific outweighs any walk's, whose answer would be a name.
DISTANCE = 20
_CUED_AS = {"met": "shared", "unmet": "excluded"}
KIND_CUED = 6  # a walk of the kind the words ask of two named things ("both": shared, "not": excluded)
UNASKED_CONNECTION = -6  # what lies between two named things, when the words do not ask it ("connects", "between")
RANKED_ASKED = 3  # a ranking of start nodes (most_connected) whose label is the one asked for ("which region")
# A word of the question that is a stored value of the nodes reached ("open" invoices, "unpaid": not "paid"):
# the walk ends where the question says it does, and the value picks among the nodes.
VALUE_HELD = 5
# A compared figure that counts things ("countries with at least 4 languages"): the number of nodes each node
# reaches is tested, which no condition on a property of the nodes reached says.
COUNT_TESTED = 6
# A walk whose last relationship (or the kind of thing it reaches) the words name and deny ("products no
# supplier offers", "airports not tied to any city"): the walk stops before it and tests its absence.
NEGATED = 6
# Two named things of one kind set against each other by a comparative ("which has more people, A or B", "is A
# bigger than B"): a reading that specific outweighs any walk from one of them or both.
CONTRASTED = 8
CONTRAST_HOPS = 2  # a measure counted along at most this many relationships
_TEMPORAL = frozenset({"before", "after", "earlier", "later", "sooner", "older", "younger"})
# A yes or no question about two named things: whether a walk joins them, or reaches something from both.
WHETHER_ASKED = 8
# A key of the last relationship the question names ("how often": times): read on the relationship, which no
# key of the nodes reached says; a little above a keyed shape of the same walk read from a guessed node key.
RELATIONSHIP_READ = 2
RANKINGS = frozenset({"highest", "lowest", "most_connected", "least_connected", *COMMON, *TOTALS})  # a top-N limits
STEM = 4  # a key sharing this many first letters with the comparative is its measure ("denser": density)


RelKeys = Mapping[str, Sequence[str]]  # relationship type -> its property keys


@dataclass(frozen=True)
class HeldValue:
    """A word of the question the graph stores as a value of `key` on nodes of `label`, as stored; `negated`:
    the question asks for the nodes without it ("unpaid"). A flag (a true/false key named by the word) is
    held as "true"."""

    label: str
    key: str
    value: str
    negated: bool = False

    @property
    def condition(self) -> Condition:
        return Condition(self.key, "<>" if self.negated else "=", self.value)


@dataclass(frozen=True)
class Program:
    """One complete program: the walk it follows, the form filled in (answer, key, condition), its Cypher and
    its evidence score."""

    walk: Walk
    intent: QueryIntent
    query: str
    score: int


def _end_labels(walk: Walk) -> LabelSet:
    return walk.labels[-1]


def _keys_of(labels: LabelSet, nodes: Nodes) -> list[str]:
    return sorted({key for label in labels for key in nodes.get(label, [])})


def _fits(walk: Walk, answer: str, nodes: Nodes) -> bool:
    """Whether the shape asks something of this walk: not a named thing's own name or count (but the name of
    a thing named by another key: "the country with the code KE"), not a ranking of start nodes that are
    named, and the distance only between two named things."""
    intent = walk.intent
    if answer == "names" and intent.start.value and not intent.hops and walk.kind == "walk":
        return intent.start.key not in ("", identifying_key(nodes.get(intent.start.label, [])))
    anchored = bool(intent.start.value)
    if answer == "path_length":
        return walk.kind == "distance"
    if answer == AVERAGE_REACHED:
        return walk.kind == "walk" and not anchored and bool(intent.hops) and intent.lacks is None
    if walk.kind == "distance":
        return False
    if answer in CONNECTED:
        return not anchored and bool(intent.hops)
    if answer in ("names", "count") and anchored and not intent.hops:
        return False
    return True


def _keyed(
    walk: Walk, answer: str, shape: AnswerShape, nodes: Nodes, conditions: frozenset[str] | set[str] = frozenset()
) -> Iterator[tuple[str, int]]:
    """(answer_key, evidence) for the shape: "" for an unkeyed one; the keys the question names that the
    nodes reached hold, else every key they hold, each a guess."""
    if answer not in KEYED:
        yield "", 0
        return
    held = _keys_of(_end_labels(walk), nodes)
    named = [key for key in shape.keys if key in held]
    if named:
        # With a figure compared and one key named, the key is the condition's ("whose area is greater than"),
        # not what is asked for.
        compared = shape.comparison is not None and len(named) == 1
        for key in named:  # a key the question names as a condition ("rush" orders, a held flag) is not asked
            yield key, KEY_NAMED if compared or key in conditions else KEY_READ
        return
    for key in held:
        yield key, KEY_MEANT if key in shape.meant else KEY_GUESSED


def _conditions(
    walk: Walk, shape: AnswerShape, answer_key: str, nodes: Nodes, held: Sequence[HeldValue]
) -> Iterator[tuple[Condition | None, int]]:
    """The conditions the question's words give the nodes reached: each value it names that they hold; a
    figure it compares, on a key the question names other than the one the answer reads, else on each key the
    nodes reached hold, each a guess; and none."""
    if walk.intent.condition is not None:
        yield None, 0
        return
    ends = _end_labels(walk)
    for value in dict.fromkeys(h.condition for h in held if h.label in ends):
        yield value, VALUE_HELD
    held_keys = _keys_of(ends, nodes)
    for key, figure in shape.stated:  # "the FIPS code 06037": the nodes whose fips it is
        if key in held_keys and key != answer_key:
            yield Condition(key, "=", figure), VALUE_HELD
    if shape.comparison is None:
        yield None, 0
        return
    operator, figure = shape.comparison
    keys = _keys_of(ends, nodes)
    named = [key for key in shape.keys if key in keys and key != answer_key] or [
        key for key in shape.keys if key in keys
    ]
    if shape.counted:  # "just one country in between": the figure counts things, no key of theirs is it
        for key in named:
            yield Condition(key, operator, figure), KEY_NAMED
        yield None, 0
        return
    for key in named or keys:
        yield Condition(key, operator, figure), KEY_NAMED if named else KEY_GUESSED


def _relationship_keys(walk: Walk, shape: AnswerShape, nodes: Nodes, rel_keys: RelKeys) -> list[str]:
    """The keys the question names that the walk's last relationship holds and no node along it does ("how
    often", said as times, of the APPEARS_WITH a walk follows): a walk's own steps, or the one relationship
    joining two named things."""
    intent = walk.intent
    if not intent.hops or intent.condition is not None or intent.lacks is not None:
        return []
    if walk.kind not in ("walk", "connection") or (walk.kind == "connection" and len(intent.hops) != 1):
        return []
    held = rel_keys.get(intent.hops[-1].relationship, ())
    # A key a node along the walk holds is that node's ("products that cost more than 100": the product's
    # unit_price, not the one each order line was priced at).
    on_nodes = {key for labels in walk.labels for key in _keys_of(labels, nodes)}
    return [key for key in dict.fromkeys(shape.keys) if key in held and key not in on_nodes]


def _relationship_programs(
    walk: Walk, shape: AnswerShape, nodes: Nodes, rel_keys: RelKeys, held: Sequence[HeldValue]
) -> Iterator[Program]:
    """The programs that read or test a key of the walk's last relationship the question names: each keyed
    shape read from it, and each shape with a figure compared on it ("seen with Valjean more than 10 times")."""
    keys = _relationship_keys(walk, shape, nodes, rel_keys)
    if not keys:
        return
    values = [(h.condition, VALUE_HELD) for h in held if h.label in _end_labels(walk)]
    compared = shape.comparison
    tested = keys[0] if compared is not None else ""
    for rank, answer in enumerate(shape.answers):
        if not _fits(walk, answer, nodes) and walk.kind != "connection":
            continue
        evidence = walk.score + _shape_evidence(rank) + RELATIONSHIP_READ
        if answer in KEYED:
            for key in keys:
                if key == tested and len(keys) == 1:
                    continue  # the one key named is the condition's ("more than 10 times"), not the answer
                for condition, condition_evidence in [*values, (None, 0)]:
                    intent = replace(
                        walk.intent, answer=answer, answer_key=key, relationship_key=True, condition=condition
                    )
                    yield Program(walk, intent, "", evidence + KEY_READ + condition_evidence)
        if tested and compared is not None and walk.kind == "walk":
            operator, figure = compared
            condition = Condition(tested, operator, figure, on_relationship=True)
            for key, key_evidence in _keyed(walk, answer, shape, nodes):
                intent = replace(walk.intent, answer=answer, answer_key=key, condition=condition)
                yield Program(walk, intent, "", evidence + key_evidence)


def _count_tests(walk: Walk, shape: AnswerShape, reading: Reading) -> Iterator[tuple[CountTest, int]]:
    """The count tests a counted comparison gives a walk that ends at what it counts (the kind of thing, or what
    the last relationship does), with their evidence: grouped by each node of the label asked for before the
    walk's end (by the start, when nothing is asked and it is not named)."""
    if not shape.counted or shape.comparison is None or walk.kind != "walk" or not walk.intent.hops:
        return
    if not (walk.labels[-1] & set(reading.counted)) and walk.intent.hops[-1].relationship not in reading.counted:
        return
    operator, figure = shape.comparison
    places = [i for i, labels in enumerate(walk.labels[:-1]) if reading.asked is not None and reading.asked in labels]
    for place in places or ([] if reading.asked is not None else [0]):
        if place == 0 and walk.intent.start.value:
            continue
        yield CountTest(place, operator, figure), COUNT_TESTED + (ASKED if places else 0)


def _common_programs(walk: Walk, shape: AnswerShape, reading: Reading, nodes: Nodes) -> Iterator[Program]:
    """For a ranking by a count over every node of one label ("which country are most suppliers based in"), the
    values of each key the question names that the label holds, ranked by how many nodes hold each."""
    intent = walk.intent
    ranking = next((a for a in shape.answers if a in CONNECTED), None)
    if ranking is None or walk.kind != "walk" or intent.hops or intent.start.value or intent.condition is not None:
        return
    held = nodes.get(intent.start.label, [])
    named = identifying_key(held)
    answer = "most_common" if ranking == "most_connected" else "least_common"
    counts_it = RANKED_ASKED if intent.start.label in reading.ranked_by else 0
    for key in shape.keys:
        if key in held and key != named:
            score = walk.score + SHAPE_FIRST + KEY_READ + counts_it
            yield Program(walk, replace(intent, answer=answer, answer_key=key), "", score)


def _total_rankings(
    walk: Walk, shape: AnswerShape, reading: Reading, nodes: Nodes, rel_keys: RelKeys
) -> Iterator[Program]:
    """For a ranking of the kind asked for by a key of what each reaches ("which customer spent the most", "the 3
    products ordered in the most units"), every node of the start's label ranked by the total of that key over
    the nodes (or the last relationships) it reaches: a key the question names, or of the nodes reached."""
    intent = walk.intent
    ranking = next((a for a in shape.answers if a in ("highest", "lowest")), None)
    if ranking is None or walk.kind != "walk" or not intent.hops or intent.start.value:
        return
    if reading.asked is None or reading.asked != intent.start.label or intent.lacks is not None:
        return
    answer = "most_total" if ranking == "highest" else "least_total"
    evidence = walk.score + _shape_evidence(shape.answers.index(ranking)) + RANKED_ASKED
    for key in _relationship_keys(walk, shape, nodes, rel_keys):
        ranked = replace(intent, answer=answer, answer_key=key, relationship_key=True)
        yield Program(walk, ranked, "", evidence + KEY_READ + RELATIONSHIP_READ)
    own = set(nodes.get(intent.start.label, []))
    for key, key_evidence in _keyed(walk, "sum", shape, nodes):
        # a key the words name or mean (every key of what it reaches is no total); not one the start holds itself
        # ("the country with the lowest area"), nor one that only names it (a province's `country`)
        if key_evidence > KEY_GUESSED and key not in own and key.lower() != intent.start.label.lower():
            yield Program(walk, replace(intent, answer=answer, answer_key=key), "", evidence + key_evidence)


def _scoped_rankings(walk: Walk, shape: AnswerShape, reading: Reading) -> Iterator[Program]:
    """For a ranking by a count within a named thing ("which city in Ohio has the most airports"), the nodes of
    the label asked for that the walk from the named thing passes, ranked by how many each reaches at its end."""
    intent = walk.intent
    if walk.kind != "walk" or not intent.start.value or len(intent.hops) < 2 or reading.asked is None:
        return
    if intent.condition is not None or intent.lacks is not None:
        return
    for rank, answer in enumerate(shape.answers):
        if answer not in CONNECTED:
            continue
        for place in range(1, len(intent.hops)):
            if reading.asked in walk.labels[place]:
                score = (
                    walk.score + _shape_evidence(rank) + RANKED_ASKED + _ranks_what_it_counts(walk, reading.ranked_by)
                )
                yield Program(walk, replace(intent, answer=answer, ranked_group=place), "", score)


def _ranks_what_it_counts(walk: Walk, counted: Sequence[str]) -> int:
    """A ranking by a count ("the time zones with the most airports") counts at the walk's end what the words
    count, and ranks the other kind: RANKED_ASKED for that, against it for the reverse."""
    said = set(counted)
    ends_at = bool(walk.labels[-1] & said) or (bool(walk.types) and walk.types[-1] in said)
    starts_at = walk.intent.start.label in said
    return RANKED_ASKED * (int(ends_at) - int(starts_at))


def negated_walks(walks: Sequence[Walk], reading: Reading, shape: AnswerShape) -> list[Walk]:
    """For a question that denies something, each walk whose last relationship or end the words after the
    denial name, stopped before that relationship and testing its absence ("no supplier supplies": the
    products without an incoming SUPPLIES); the thing named at its far end, when there is one, is the one
    that must not be reached."""
    if not shape.negated:
        return []
    said = set(reading.denied)
    found = []
    for walk in walks:
        intent = walk.intent
        if walk.kind != "walk" or not intent.hops or intent.condition is not None or intent.lacks is not None:
            continue
        last, far = intent.hops[-1], walk.labels[-1]
        if last.relationship not in said and not far & said:
            continue
        if len(intent.hops) == 1 and intent.start.value:
            continue  # whether one named thing lacks it: a yes or no, not a walk's answer
        other = next((a for a in reading.named if a.label in far and a != intent.start), None)
        label = next(iter(far)) if len(far) == 1 else None
        asked = reading.asked
        score = (
            walk.score
            + NEGATED
            + (ASKED if asked is not None and asked in walk.labels[-2] else 0)
            - (ASKED if asked is not None and asked in far else 0)
            + (EVERY_NAMED if other is not None else 0)
        )
        lack = Lack(last, label, other)
        found.append(Walk("walk", replace(intent, hops=intent.hops[:-1], lacks=lack), walk.labels[:-1], score))
    return found


def _pairs(named: Sequence[Anchor]) -> list[tuple[Anchor, Anchor]]:
    """Each two named things of one label, in the question's order: what a contrast can set against each
    other."""
    return [
        (first, second)
        for i, first in enumerate(named)
        for second in named[i + 1 :]
        if first.label == second.label and first.value != second.value
    ]


def contrasted_walks(walks: Sequence[Walk], reading: Reading, shape: AnswerShape) -> list[Walk]:
    """For a question that sets two named things of one label against each other, each walk from the first
    (itself, or up to CONTRAST_HOPS relationships from it) as the measure both are compared by."""
    if shape.contrast is None:
        return []
    found = []
    for first, second in _pairs(reading.named):
        for walk in walks:
            intent = walk.intent
            if walk.kind != "walk" or intent.start != first or len(intent.hops) > CONTRAST_HOPS:
                continue
            if intent.hops and shape.contrasted_by not in COUNTING_COMPARATIVES:
                continue  # "bigger", "higher": a property of each, not how many things each reaches
            if intent.condition is not None or intent.lacks is not None:
                continue
            contrasted = replace(intent, other=second, contrast=shape.contrast)
            found.append(Walk("contrast", contrasted, walk.labels, walk.score + CONTRASTED))
    return found


def _contrast_programs(
    walk: Walk, shape: AnswerShape, reading: Reading, nodes: Nodes, held: Sequence[HeldValue]
) -> Iterator[Program]:
    """A contrast walk's programs: with no hops, one per property of the label (the keys the question names,
    or one sharing the comparative's stem, before the rest); with hops, how many nodes they reach from each
    (with a stored value the question names as the condition on them), more so when the words say what is
    counted."""
    intent = walk.intent
    if not intent.hops:
        shown = identifying_key(nodes.get(intent.start.label, []))
        stem = shape.contrasted_by[:STEM]
        for key, evidence in _keyed(walk, "max", shape, nodes):
            if key == shown:
                continue
            if evidence == KEY_GUESSED:  # the comparative is the measure's adjective: every key may be it
                stemmed = len(stem) == STEM and key.lower().startswith(stem)
                timed = shape.contrasted_by in _TEMPORAL and is_time_point(key)  # "before": a year or a date
                evidence = KEY_READ if stemmed or timed else 0
            counted = -COUNT_TESTED if shape.counted else 0  # "more airports" counts airports
            score = walk.score + evidence + counted
            yield Program(walk, replace(intent, answer="value", answer_key=key), "", score)
        return
    ends = walk.labels[-1]
    counted = bool(ends & set(reading.counted)) or intent.hops[-1].relationship in reading.counted
    conditions = [h.condition for h in held if h.label in ends]
    for condition in [*dict.fromkeys(conditions), None]:
        score = walk.score + (COUNT_TESTED if counted else 0) + (VALUE_HELD if condition is not None else 0)
        yield Program(walk, replace(intent, answer="count", condition=condition), "", score)


def _shape_evidence(rank: int) -> int:
    return SHAPE_FIRST if rank == 0 else SHAPE_SECOND if rank == 1 else 0


def distance_walks(named: Sequence[Anchor], shape: AnswerShape) -> list[Walk]:
    """The relationships between each two named things, as walks of their own kind, when the words ask it."""
    if "path_length" not in shape.answers:
        return []
    return [
        Walk(
            "distance",
            QueryIntent(first, (), other=second, answer="path_length"),
            (frozenset({first.label}),),
            DISTANCE,
        )
        for i, first in enumerate(named)
        for second in named[i + 1 :]
    ]


def enumerate_programs(
    reading: Reading,
    shape: AnswerShape,
    nodes: Nodes,
    walks: Sequence[Walk],
    held: Sequence[HeldValue] = (),
    rel_keys: RelKeys | None = None,
) -> list[Program]:
    """Every program of `walks` (best first) with the question's shapes, best evidence first; ties keep the
    walks' order, then the shapes'. Not compiled: `query` is empty."""
    found: list[tuple[int, int, Program]] = []
    rel_keys = rel_keys or {}
    for order, walk in enumerate(walks):
        found += [(-p.score, order, p) for p in _relationship_programs(walk, shape, nodes, rel_keys, held)]
        found += [(-p.score, order, p) for p in _common_programs(walk, shape, reading, nodes)]
        found += [(-p.score, order, p) for p in _scoped_rankings(walk, shape, reading)]
        found += [(-p.score, order, p) for p in _total_rankings(walk, shape, reading, nodes, rel_keys)]
        if walk.kind == "contrast":
            found += [(-p.score, order, p) for p in _contrast_programs(walk, shape, reading, nodes, held)]
            continue
        # "the same currency": shared; what two named things reach by their own walks is cued as theirs alike
        cued = KIND_CUED if _CUED_AS.get(walk.kind, walk.kind) in shape.combines else 0
        if shape.whether and walk.kind in ("connection", "shared") and walk.intent.start.value:
            for condition, condition_evidence in _conditions(walk, shape, "", nodes, held):
                intent = replace(walk.intent, answer=WHETHER, condition=condition)
                score = walk.score + WHETHER_ASKED + condition_evidence + cued
                found.append((-score, order, Program(walk, intent, "", score)))
        if walk.kind == "connection" and "connection" not in shape.combines:
            cued = UNASKED_CONNECTION
        if walk.kind in _CUED_AS and "connection" in shape.combines:  # "how is A connected to B": not what both reach
            cued = UNASKED_CONNECTION
        for test, test_evidence in _count_tests(walk, shape, reading):
            for condition, condition_evidence in [
                (c, e) for c, e in _conditions(walk, shape, "", nodes, held) if e == VALUE_HELD
            ] or [(None, 0)]:
                # "how many countries have at least 100 cities" counts the groups that pass; "which" names them
                answer = "count" if shape.answers[:1] == ("count",) else "names"
                intent = replace(walk.intent, answer=answer, count_test=test, condition=condition)
                score = walk.score + SHAPE_FIRST + test_evidence + condition_evidence
                found.append((-score, order, Program(walk, intent, "", score)))
        for rank, answer in enumerate(shape.answers):
            if not _fits(walk, answer, nodes):
                continue
            for key, key_evidence in _keyed(walk, answer, shape, nodes, {h.key for h in held}):
                for condition, condition_evidence in _conditions(walk, shape, key, nodes, held):
                    intent = replace(
                        walk.intent, answer=answer, answer_key=key, condition=walk.intent.condition or condition
                    )
                    score = walk.score + _shape_evidence(rank) + key_evidence + condition_evidence + cued
                    if answer in CONNECTED and reading.asked is not None:
                        score += RANKED_ASKED if walk.intent.start.label == reading.asked else -RANKED_ASKED
                    if answer in CONNECTED and reading.ranked_by:
                        score += _ranks_what_it_counts(walk, reading.ranked_by)
                    if answer == AVERAGE_REACHED and reading.asked is not None:  # "how many counties": counted
                        score += _ranks_what_it_counts(walk, (reading.asked,))
                    found.append((-score, order, Program(walk, intent, "", score)))
    found.sort(key=lambda entry: (entry[0], entry[1]))
    return [program for _, _, program in found]


def programs(
    reading: Reading,
    shape: AnswerShape,
    nodes: Nodes,
    rels: set[Rel],
    observed: Sequence[Sequence[str]] = (),
    k: int = PROGRAMS,
    held: Sequence[HeldValue] = (),
    rel_keys: RelKeys | None = None,
) -> list[Program]:
    """The `k` best programs for the question, each compiled (one the compiler refuses is left out); `held`:
    the question's words the graph stores as values; `rel_keys`: each relationship type's property keys."""
    named = tuple(anchor for anchor in reading.named if anchor.label in nodes)
    walks = [*distance_walks(named, shape), *enumerate_walks(reading, nodes, rels, observed)[:WALKS]]
    walks += negated_walks(walks, reading, shape)
    walks += contrasted_walks(walks, reading, shape)
    chosen: list[Program] = []
    compiled: set[str] = set()
    for program in enumerate_programs(reading, shape, nodes, walks, held, rel_keys):
        if len(chosen) == k:
            break
        if shape.top and program.intent.answer in RANKINGS:  # "the 3 highest": only the programs kept say so
            program = replace(program, intent=replace(program.intent, top=shape.top))
        try:
            query = compile_intent(program.intent, nodes, rels)
        except IntentError:
            continue
        if query not in compiled:  # two walks may make one query (a relationship followed either way)
            compiled.add(query)
            chosen.append(replace(program, query=query))
    return chosen
