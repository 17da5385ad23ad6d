"""The walks a question could mean, enumerated from the schema instead of composed by a model: from each thing
the question names (from every node of each label when it names none), the thing itself and every walk of one
to three relationships the schema allows, either way along each, the same one again included; with two named
things, what both reach the same way, what one reaches and the other does not, and the walks that join one to
the other. Each walk is a partial query form (cypher/intent.py) that compile_intent accepts; walks are then
joined with answer shapes into whole programs (cypher/programs.py), ranked rather than composed by a model.

Walks are ranked by generic evidence only: the relationship types and labels the question's words name (in the
order it names them), ending at the kind of thing asked for, using every named thing; shorter walks first on
ties. Nothing here knows a graph, a domain or a wording: the question is read once, elsewhere
(questions/reading.py), and arrives as a `Reading`. The enumeration keeps the BEAM best partial walks at each
length, so a large schema costs a bounded number of walks. Pure functions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from cypher.intent import MAX_HOPS, THROUGH, Anchor, Hop, IntentError, Nodes, QueryIntent, Rel, compile_intent

CANDIDATES = 12  # walks a model is shown: each costs a line of prompt
# Partial walks kept at each length, per kind and pair of named things, best evidence first: a schema of 30
# labels and 60 relationships stays a few thousand walks (tests/unit/test_walk_space.py bounds the count).
BEAM = 200

# distance: how many relationships lie between two named things (cypher/programs.py makes those).
# met, unmet: what one named thing's walk reaches that the other's own (different) walk reaches, or does not.
Kind = Literal["walk", "shared", "excluded", "met", "unmet", "connection", "distance", "contrast"]
_KIND_ORDER: dict[Kind, int] = {
    "walk": 0,
    "shared": 1,
    "excluded": 2,
    "met": 3,
    "unmet": 4,
    "connection": 5,
    "distance": 6,
    "contrast": 7,
}
MET_SIDE = 30  # walks from each of two named things paired to meet, best evidence first
MET_HOPS = 4  # the two walks that meet, together
# Met and unmet walks kept of each pair, best first: they all use both named things, and more would crowd the
# other kinds out of the walks a question's shapes are tried with (cypher/programs.py WALKS).
MET_KEPT = 6

# Evidence weights. A relationship the question spells out is the strongest sign of a hop, and each time it is
# spelled counts (a relationship named twice is walked twice); ending at the kind of thing asked for comes next.
SPELLED = 4  # per hop whose relationship the question spells out (as often as it does)
IN_ORDER = 2  # the walk follows the spelled relationships in the question's order (two or more)
HINTED = 2  # per relationship type of the walk a word of the question shares a stem with
LABEL = 2  # per label on the walk the question spells out
LABEL_HINTED = 1  # per label on the walk a word of the question shares a stem with
ASKED = 3  # the walk ends at the label asked for
EVERY_NAMED = 3  # the walk uses every thing the question names
OBSERVED = 6  # a connection the data holds between the two named things (the caller found it)
UNEXPLAINED = 1  # per hop whose relationship no word of the question spells or hints (at each time it does)


class Reading(Protocol):
    """What the enumeration reads of a question: questions/reading.py's QuestionReading."""

    @property
    def named(self) -> tuple[Anchor, ...]: ...
    @property
    def asked(self) -> str | None: ...
    @property
    def relationships(self) -> tuple[str, ...]: ...
    @property
    def labels(self) -> tuple[str, ...]: ...
    @property
    def hinted(self) -> tuple[str, ...]: ...
    @property
    def counted(self) -> tuple[str, ...]: ...
    @property
    def denied(self) -> tuple[str, ...]: ...
    @property
    def ranked_by(self) -> tuple[str, ...]: ...
    @property
    def unsaid(self) -> tuple[tuple[str, int], ...]: ...
    @property
    def hint_sources(self) -> tuple[tuple[str, tuple[str, ...]], ...]: ...


LabelSet = frozenset[str]


@dataclass(frozen=True)
class Walk:
    """One candidate: a partial query form (start, hops, combine, other; a connection's condition ends it at the
    other named thing), the labels each node along it can have (the start's first), and its evidence score.
    compile_intent accepts it with any answer shape, but a walk of no hops (the start itself) has nothing to
    rank its start by (most_connected, least_connected)."""

    kind: Kind
    intent: QueryIntent
    labels: tuple[LabelSet, ...]
    score: int = 0
    other_labels: tuple[LabelSet, ...] = ()  # met, unmet: the labels along the other named thing's walk

    @property
    def types(self) -> tuple[str, ...]:
        return tuple(hop.relationship for hop in self.intent.hops)


@dataclass(frozen=True)
class _Path:
    """A start and the hops from it, with the labels each node can have."""

    start: Anchor
    hops: tuple[Hop, ...]
    labels: tuple[LabelSet, ...]


def _steps(labels: LabelSet, rels: set[Rel]) -> list[tuple[Hop, LabelSet]]:
    """Every hop the schema allows from a node of one of `labels`, and the labels it reaches, in a fixed order:
    each relationship type along its arrow, then against it."""
    reached: dict[tuple[str, str], set[str]] = {}
    for source, rel_type, target in sorted(rels):
        if source in labels:
            reached.setdefault((rel_type, "outgoing"), set()).add(target)
        if target in labels:
            reached.setdefault((rel_type, "incoming"), set()).add(source)
    return [(Hop(rel_type, direction), frozenset(ends)) for (rel_type, direction), ends in sorted(reached.items())]


def _follow(labels: LabelSet, hops: tuple[Hop, ...], rels: set[Rel]) -> tuple[LabelSet, ...] | None:
    """The labels each node reached along `hops` from `labels` can have; None when a hop is not allowed."""
    seen = [labels]
    for hop in hops:
        step = dict(_steps(seen[-1], rels))
        if hop not in step:
            return None
        seen.append(step[hop])
    return tuple(seen)


def _grow(
    starts: list[_Path], rels: set[Rel], rank: Callable[[_Path], int], keep: Callable[[_Path], bool] = lambda path: True
) -> list[_Path]:
    """Every path of 1..MAX_HOPS hops from `starts`, the BEAM best by `rank` kept at each length; `keep` says
    which paths may grow further (a connection's cannot reach its goal from everywhere)."""
    found: list[_Path] = []
    frontier = starts
    for _ in range(MAX_HOPS):
        grown = [
            _Path(path.start, (*path.hops, hop), (*path.labels, reached))
            for path in frontier
            for hop, reached in _steps(path.labels[-1], rels)
        ]
        grown = [path for path in grown if keep(path)]
        if len(grown) > BEAM:
            grown = sorted(grown, key=lambda path: -rank(path))[:BEAM]  # stable: ties keep the schema's order
        found += grown
        frontier = grown
    return found


def _spelled_hops(types: tuple[str, ...], spelled: tuple[str, ...]) -> int:
    """How many of the walk's hops the question spells out, each spelled relationship used at most as often as
    it is spelled."""
    left = list(spelled)
    matched = 0
    for rel_type in types:
        if rel_type in left:
            left.remove(rel_type)
            matched += 1
    return matched


def _hinted_hops(types: set[str], sources: tuple[tuple[str, tuple[str, ...]], ...]) -> int:
    """How many of the walk's relationship types the question's words hint, each word accounting for one type
    (a largest matching of words to the types they hint: a handful of each, so by augmenting paths)."""
    owner: dict[str, int] = {}  # type -> the word accounting for it

    def assign(word: int, seen: set[str]) -> bool:
        for rel_type in sources[word][1]:
            if rel_type in types and rel_type not in seen:
                seen.add(rel_type)
                if rel_type not in owner or assign(owner[rel_type], seen):
                    owner[rel_type] = word
                    return True
        return False

    return sum(assign(word, set()) for word in range(len(sources)))


def _in_order(types: tuple[str, ...], spelled: tuple[str, ...]) -> bool:
    """Whether the walk follows the spelled relationships in the order the question spells them."""
    walked = iter(types)
    return all(rel_type in walked for rel_type in spelled)


def _word_evidence(path: _Path, reading: Reading, other: Anchor | None = None, from_both: bool = False) -> int:
    """The evidence from the question's words: relationships spelled (and in order) or hinted, less each hop
    they do not account for, and labels on the walk spelled or hinted, but for those of the named things it
    uses (their names account for those words: "the province Skane" says nothing of a walk through another
    province). `from_both`: the hops are walked from each of the two named things ("that Acme supplies and Globex
    also supplies" spells SUPPLIES once for each)."""
    types = tuple(hop.relationship for hop in path.hops) * (2 if from_both else 1)
    score = SPELLED * _spelled_hops(types, reading.relationships)
    said = (*reading.relationships, *(t for t in reading.hinted if t not in reading.relationships))
    score -= UNEXPLAINED * (len(types) - _spelled_hops(types, said))
    if len(reading.relationships) > 1 and _in_order(types, reading.relationships):
        score += IN_ORDER
    score += HINTED * _hinted_hops(set(types), reading.hint_sources)
    named = {anchor.label for anchor in (path.start, other) if anchor is not None and anchor.value}
    on_walk = frozenset[str]().union(*path.labels) - named
    score += LABEL * len(on_walk & set(reading.labels))
    score += LABEL_HINTED * len(on_walk & (set(reading.hinted) - set(reading.labels)))
    return score


def _score(kind: Kind, path: _Path, other: Anchor | None, reading: Reading, held: bool) -> int:
    """All the walk's evidence. `other`: the second named thing it uses; `held`: a connection the data holds."""
    anchored = bool(path.start.value)
    score = _word_evidence(path, reading, other, from_both=kind in ("shared", "excluded"))
    ends = path.labels[-1] | (frozenset() if anchored else path.labels[0])  # a ranking of every node: its start
    if reading.asked is not None and reading.asked in ends:
        score += ASKED
    if (1 if anchored else 0) + (1 if other is not None else 0) >= len(reading.named):
        score += EVERY_NAMED
    if held:
        score += OBSERVED
    return score


def _intent(kind: Kind, path: _Path, other: Anchor | None) -> QueryIntent:
    if kind == "connection":  # answered about what it passes through: its end is the other named thing
        return QueryIntent(path.start, path.hops, THROUGH, other)
    combine = {"walk": "none", "shared": "also_reached_from_other", "excluded": "not_reached_from_other"}[kind]
    return QueryIntent(path.start, path.hops, combine, other)


def _order(
    walk: Walk, named: tuple[Anchor, ...], unsaid: dict[str, int]
) -> tuple[int, int, int, int, int, int, int, str]:
    """Best evidence first, then shorter, then with fewer words of its relationships' names the question does
    not say, then fewer hops against the arrow, then by kind, by where its named things stand in the question,
    and by its hops: a total order, the same on every run."""
    intent = walk.intent

    def at(anchor: Anchor | None) -> int:
        return named.index(anchor) if anchor in named else len(named)

    hops = (*intent.hops, *intent.other_hops)
    backwards = sum(hop.direction == "incoming" for hop in hops)
    spelled = " ".join(f"{hop.relationship}:{hop.direction}" for hop in hops)
    return (
        -walk.score,
        len(hops),
        sum(unsaid.get(hop.relationship, 0) for hop in hops),
        backwards,
        _KIND_ORDER[walk.kind],
        at(intent.start),
        at(intent.other),
        f"{intent.start.label} {spelled}",
    )


def _single(
    named: tuple[Anchor, ...], reading: Reading, nodes: Nodes, rels: set[Rel]
) -> list[tuple[Kind, _Path, Anchor | None]]:
    """From each named thing, or from every node of each label when none is named: the thing itself, and every
    walk from it."""
    starts = list(named) or [Anchor(label) for label in sorted(nodes)]
    paths = [_Path(start, (), (frozenset({start.label}),)) for start in starts]
    grown = _grow(paths, rels, lambda path: _word_evidence(path, reading))
    return [("walk", path, None) for path in [*paths, *grown]]


def _paired(first: Anchor, second: Anchor, reading: Reading, rels: set[Rel]) -> list[tuple[Kind, _Path, Anchor]]:
    """Walks from `first` that `second` can walk the same way to the same kind of thing: what both reach, and
    what only `first` reaches."""

    def rank(path: _Path) -> int:
        return _word_evidence(path, reading, second, from_both=True)

    found: list[tuple[Kind, _Path, Anchor]] = []
    for path in _grow([_Path(first, (), (frozenset({first.label}),))], rels, rank):
        theirs = _follow(frozenset({second.label}), path.hops, rels)
        if theirs is not None and theirs[-1] & path.labels[-1]:
            found += [("shared", path, second), ("excluded", path, second)]
    return found


def _met(first: Anchor, second: Anchor, reading: Reading, rels: set[Rel], both_ways: bool) -> list[Walk]:
    """What a walk from `first` reaches that a different walk from `second` also reaches ("met": the Vietnamese
    cities on Bangkok's time zone), and what it reaches that that walk does not ("unmet": Germany's neighbours
    that do not use the euro); `both_ways`: the met walks too (the same query as from the other side)."""

    def sides(anchor: Anchor, other: Anchor) -> list[_Path]:
        grown = _grow([_Path(anchor, (), (frozenset({anchor.label}),))], rels, lambda p: _word_evidence(p, reading))
        return sorted(grown, key=lambda path: -_word_evidence(path, reading, other))[:MET_SIDE]

    found: list[Walk] = []
    for mine in sides(first, second):
        for theirs in sides(second, first):
            meet = mine.labels[-1] & theirs.labels[-1]
            if not meet or mine.hops == theirs.hops or len(mine.hops) + len(theirs.hops) > MET_HOPS:
                continue
            joined = _Path(first, (*mine.hops, *theirs.hops), (*mine.labels, *theirs.labels[1:]))
            score = _word_evidence(joined, reading, second) + EVERY_NAMED * (len(reading.named) <= 2)
            score += ASKED if reading.asked in meet else 0
            ways: tuple[tuple[Kind, str], ...] = (
                ("met", "also_reached_from_other"),
                ("unmet", "not_reached_from_other"),
            )
            for kind, combine in ways:
                if kind == "met" and not both_ways:
                    continue
                intent = QueryIntent(first, mine.hops, combine, second, other_hops=theirs.hops)
                found.append(Walk(kind, intent, mine.labels, score, theirs.labels))
    best = sorted(found, key=lambda walk: -walk.score)  # stable: ties keep the order the sides were grown in
    return [walk for kind in ("met", "unmet") for walk in [w for w in best if w.kind == kind][:MET_KEPT]]


def _distances(goal: str, rels: set[Rel]) -> dict[str, int]:
    """Each label's fewest relationships to `goal`, either way along them."""
    distance = {goal: 0}
    frontier = [goal]
    while frontier:
        nearer = []
        for label in frontier:
            for source, _, target in sorted(rels):
                for here, there in ((source, target), (target, source)):
                    if here == label and there not in distance:
                        distance[there] = distance[label] + 1
                        nearer.append(there)
        frontier = nearer
    return distance


def _connections(
    first: Anchor, second: Anchor, reading: Reading, rels: set[Rel], observed: list[tuple[str, ...]]
) -> list[tuple[Kind, _Path, Anchor]]:
    """Walks from `first`'s label that end at `second`'s, up to MAX_HOPS: those the data holds (`observed`,
    each way along each relationship the schema allows) and the others the schema allows."""
    start = _Path(first, (), (frozenset({first.label}),))
    distance = _distances(second.label, rels)

    def can_arrive(path: _Path) -> bool:
        left = MAX_HOPS - len(path.hops)
        return min((distance.get(label, MAX_HOPS + 1) for label in path.labels[-1]), default=MAX_HOPS + 1) <= left

    def rank(path: _Path) -> int:
        return _word_evidence(path, reading, second)

    paths = _grow([start], rels, rank, can_arrive)
    for types in observed:
        paths += _observed_paths(start, types, rels)
    arriving = {path.hops: path for path in paths if second.label in path.labels[-1]}
    return [("connection", path, second) for path in arriving.values()]


def _observed_paths(start: _Path, types: tuple[str, ...], rels: set[Rel]) -> list[_Path]:
    """The paths from `start` along relationship types observed between two things, each way the schema
    allows each hop."""
    paths = [start]
    for rel_type in types:
        paths = [
            _Path(p.start, (*p.hops, hop), (*p.labels, reached))
            for p in paths
            for hop, reached in _steps(p.labels[-1], rels)
            if hop.relationship == rel_type
        ]
    return paths


def enumerate_walks(
    reading: Reading, nodes: Nodes, rels: set[Rel], observed: Sequence[Sequence[str]] = ()
) -> list[Walk]:
    """Every walk considered for the question, best first (see the module's docstring). `observed`: the
    relationship-type sequences the data holds between the first two named things, found by the caller;
    they rank first among the connections."""
    named = tuple(anchor for anchor in reading.named if anchor.label in nodes)
    held = {tuple(types) for types in observed if 0 < len(types) <= MAX_HOPS}
    found: list[tuple[Kind, _Path, Anchor | None]] = list(_single(named, reading, nodes, rels))
    met: list[Walk] = []
    for i, first in enumerate(named):
        for second in named[i + 1 :]:
            found += _paired(first, second, reading, rels)
            found += [p for p in _paired(second, first, reading, rels) if p[0] == "excluded"]
            found += _connections(first, second, reading, rels, sorted(held) if (first, second) == named[:2] else [])
            met += _met(first, second, reading, rels, both_ways=True) + _met(second, first, reading, rels, False)
    walks = met
    for kind, path, other in found:
        is_held = (
            kind == "connection"
            and path.start == named[0]
            and other == named[1]
            and tuple(hop.relationship for hop in path.hops) in held
        )
        walks.append(Walk(kind, _intent(kind, path, other), path.labels, _score(kind, path, other, reading, is_held)))
    unsaid = dict(reading.unsaid)
    return sorted(walks, key=lambda walk: _order(walk, named, unsaid))


def candidate_walks(
    reading: Reading, nodes: Nodes, rels: set[Rel], observed: Sequence[Sequence[str]] = (), k: int = CANDIDATES
) -> list[Walk]:
    """The `k` best walks for the question, each one compile_intent accepts (one that does not is left out)."""
    chosen: list[Walk] = []
    for walk in enumerate_walks(reading, nodes, rels, observed):
        if len(chosen) == k:
            break
        try:
            compile_intent(walk.intent, nodes, rels)
        except IntentError:
            continue
        chosen.append(walk)
    return chosen
