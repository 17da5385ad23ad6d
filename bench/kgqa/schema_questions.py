"""Labelled questions for any graph, from its live schema and data alone (bench/kgqa/snapshot.py). Each maker
samples real entities, writes a reference query for what it asks and takes the gold answer from running that
query on the graph; the query travels with the gold (`reference`) so a reader can check it. Several wordings
per kind; the relationship and property words come from the schema's own identifiers, so nothing here knows a
graph, a domain or its vocabulary. Kinds: lookup, one-hop, count, aggregation, superlative, multi-hop,
connection paths, filters, set intersection and difference, and entities that do not exist."""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.kgqa import questions as g
from bench.kgqa.questions import Gold, Question
from bench.kgqa.scoring import echoes, without_question_names
from bench.kgqa.snapshot import Label, Link, Snapshot, usable_name, words

MAX_LISTED = 8  # a question whose answer lists more names than this is not asked
DISTRACTORS = 6
SYLLABLES = [
    "var",
    "quen",
    "mir",
    "tol",
    "bra",
    "zen",
    "dor",
    "vel",
    "kas",
    "lun",
    "tre",
    "ostra",
    "hal",
    "nor",
    "wyn",
    "gal",
    "fen",
    "ix",
    "or",
    "ael",
    "thu",
    "ren",
    "sko",
    "mar",
]
QUOTAS = {
    "lookup": 50,
    "one-hop": 55,
    "count": 55,
    "aggregation": 50,
    "superlative": 50,
    "multi-hop": 65,
    "path": 50,
    "filter": 45,
    "set": 40,
    "non-existent": 45,
}
ATTEMPTS_PER_QUESTION = 80


@dataclass(frozen=True)
class Draft:
    """A question before its gold: wordings, the fields they take, the reference query, and how its rows make
    the gold (None: the rows do not make a good question)."""

    templates: tuple[str, ...]
    fields: dict[str, Any]
    reference: str
    gold: Callable[[list[list[Any]]], Gold | None]
    key: str  # what makes two drafts the same question, in any wording


def article(phrase: str) -> str:
    return f"{'an' if phrase[:1] in 'aeiou' else 'a'} {phrase}"


def lit(value: Any) -> str:
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return repr(value)


def node(var: str, label: Label, name: str | None = None) -> str:
    return f"({var}:`{label.name}` {{`{label.key}`: {lit(name)}}})" if name is not None else f"({var}:`{label.name}`)"


def arrow(link: Link, forward: bool) -> str:
    """The pattern's relationship from the walking side: -[:T]-> forward, <-[:T]- backward."""
    return f"-[:`{link.type}`]->" if forward else f"<-[:`{link.type}`]-"


def names_gold(
    rows: list[list[Any]], pool: list[str], match: str = "all", aliases: dict[str, list[str]] | None = None
) -> Gold | None:
    """The names the rows hold, each with its codes as other accepted spellings (`aliases`)."""
    found = [str(r[0]) for r in rows if usable_name(r[0])]
    if not found or len(found) != len(rows) or len(found) > MAX_LISTED:
        return None
    lowered = {f.lower() for f in found}
    items: list[str | list[str]] = [
        [f, *(aliases or {}).get(f.lower(), [])] if (aliases or {}).get(f.lower()) else f for f in sorted(set(found))
    ]
    return g.names(items, match=match, distractors=[p for p in pool if p.lower() not in lowered])


def is_code(value: Any) -> bool:
    """An identifier a person may answer with instead of the name: one upper-case token of 3 to 8 letters or
    digits ("EUR", "FRA", "KLAX"), never a word such as a capital's name."""
    return (
        isinstance(value, str) and re.fullmatch(r"[A-Z0-9]{3,8}", value) is not None and any(c.isalpha() for c in value)
    )


def number_gold(rows: list[list[Any]], *, integer: bool = False) -> Gold | None:
    if len(rows) != 1 or not isinstance(rows[0][0], (int, float)) or isinstance(rows[0][0], bool):
        return None
    value = rows[0][0]
    return g.count(int(value)) if integer else g.number(round(float(value), 4))


class Makers:
    def __init__(self, snap: Snapshot) -> None:
        self.s = snap
        self.named_labels = [lb for lb in snap.labels.values() if lb.key]
        self.links = [k for k in snap.links if snap.labels[k.source].key and snap.labels[k.target].key]
        self.aliases = self._codes()
        self.named_lower = {v.lower() for v in snap.named.values()}
        self.stored = snap.stored_texts()  # an invented name must be none of these, nor inside one

    def _codes(self) -> dict[str, list[str]]:
        """Each nameable node's codes (a value no other node of its label has): accepted for its name."""
        found: dict[str, list[str]] = {}
        for label in self.named_labels:
            for prop in {k for props in label.nodes.values() for k in props} - {label.key}:
                counts = Counter(str(p.get(prop)) for p in label.nodes.values() if is_code(p.get(prop)))
                for n, props in label.nodes.items():
                    value = props.get(prop)
                    if n in self.s.named and is_code(value) and counts[str(value)] == 1:
                        found.setdefault(self.s.named[n].lower(), []).append(str(value))
        return found

    def names(self, rows: list[list[Any]], pool: list[str], match: str = "all") -> Gold | None:
        return names_gold(rows, pool, match, self.aliases)

    # -- sampling ------------------------------------------------------------------------------------------
    def named_nodes(self, label: Label) -> list[int]:
        return [n for n in sorted(label.nodes) if n in self.s.named]

    def pool(self, label: Label, rng: random.Random, k: int = DISTRACTORS * 3) -> list[str]:
        names = [self.s.named[n] for n in self.named_nodes(label)]
        return rng.sample(names, min(k, len(names)))

    def side(self, link: Link, rng: random.Random) -> tuple[bool, Label, Label, dict[int, list[int]]]:
        """Walk a link forward (source to target) or, unless symmetric, backward."""
        forward = link.symmetric or rng.random() < 0.5
        start, end = (link.source, link.target) if forward else (link.target, link.source)
        return forward, self.s.labels[start], self.s.labels[end], (link.out if forward else link.into)

    def rel_phrase(self, link: Link, forward: bool) -> dict[str, str]:
        direction = "" if forward or link.symmetric else "incoming "
        return {"rel": link.words, "dir": direction, "a_rel": article(f"{direction}{link.words}")}

    # -- makers --------------------------------------------------------------------------------------------
    def lookup(self, rng: random.Random) -> Draft | None:
        label = rng.choice(self.named_labels)
        props = label.figures + label.texts
        nodes = self.named_nodes(label)
        if not props or not nodes:
            return None
        n, prop = rng.choice(nodes), rng.choice(props)
        value = label.nodes[n].get(prop)
        if value is None:
            return None
        name = self.s.named[n]
        ref = f"MATCH {node('n', label, name)} RETURN n.`{prop}`"
        others = sorted({str(p.get(prop)) for p in label.nodes.values() if isinstance(p.get(prop), str)})

        def gold(rows: list[list[Any]]) -> Gold | None:
            if isinstance(value, str):
                pool = [o for o in rng.sample(others, min(len(others), 12)) if o.lower() != value.lower()]
                return g.name(value, distractors=pool[:DISTRACTORS]) if len(rows) == 1 else None
            return number_gold(rows, integer=isinstance(value, int))

        return Draft(
            (
                "What is the {prop} of {name}?",
                "What {prop} does the {label} {name} have?",
                "Tell me the {prop} of the {label} {name}.",
            ),
            {"prop": words(prop), "name": name, "label": label.words},
            ref,
            gold,
            f"lookup:{n}:{prop}",
        )

    def linked_node(self, rng: random.Random, most: int | None = None) -> tuple[Link, bool, Label, Label, int] | None:
        """A link walked from a named node with at least one neighbour along it (and at most `most`)."""
        link = rng.choice(self.links)
        forward, start, end, step = self.side(link, rng)
        nodes = [n for n in self.named_nodes(start) if 1 <= len(step.get(n, [])) <= (most or len(end.nodes))]
        if not nodes:
            return None
        return link, forward, start, end, rng.choice(nodes)

    def one_hop(self, rng: random.Random) -> Draft | None:
        found = self.linked_node(rng, MAX_LISTED)
        if found is None:
            return None
        link, forward, start, end, n = found
        name = self.s.named[n]
        rel = arrow(link, forward)
        ref = f"MATCH {node('a', start, name)}{rel}{node('b', end)} RETURN DISTINCT b.`{end.key}`"
        pool = self.pool(end, rng)
        fields = {"name": name, "ends": end.plural, **self.rel_phrase(link, forward)}
        return Draft(
            (
                "Which {ends} is {name} connected to through its {dir}{rel} relationships?",
                "Following {dir}{rel} from {name}, which {ends} do you reach?",
                "List the {ends} that {name} has {a_rel} relationship with.",
            ),
            fields,
            ref,
            lambda rows: self.names(rows, pool),
            f"one-hop:{link.type}:{forward}:{n}",
        )

    def count(self, rng: random.Random) -> Draft | None:
        found = self.linked_node(rng)
        if found is None:
            return None
        link, forward, start, end, n = found
        name = self.s.named[n]
        rel = arrow(link, forward)
        ref = f"MATCH {node('a', start, name)}{rel}{node('b', end)} RETURN count(DISTINCT b)"
        return Draft(
            (
                "How many {ends} is {name} connected to through {dir}{rel}?",
                "Count the {ends} that {name} has {a_rel} relationship with.",
                "What is the number of {ends} linked to {name} by {dir}{rel}?",
            ),
            {"name": name, "ends": end.plural, **self.rel_phrase(link, forward)},
            ref,
            lambda rows: number_gold(rows, integer=True),
            f"count:{link.type}:{forward}:{n}",
        )

    def figured_neighbours(
        self, rng: random.Random, least: int, most: int | None = None
    ) -> tuple[Link, bool, Label, Label, dict[int, list[int]], str, int] | None:
        """A link walked from a named node whose neighbours along it hold a figure (`prop`), between `least`
        and `most` of them: (link, forward, start label, end label, steps, prop, node)."""
        link = rng.choice(self.links)
        forward, start, end, step = self.side(link, rng)
        if not end.figures:
            return None
        prop = rng.choice(end.figures)
        most = most or len(end.nodes)
        nodes = [
            n
            for n in self.named_nodes(start)
            if least <= sum(end.nodes[m].get(prop) is not None for m in step.get(n, [])) <= most
        ]
        if not nodes:
            return None
        return link, forward, start, end, step, prop, rng.choice(nodes)

    def aggregation(self, rng: random.Random) -> Draft | None:
        found = self.figured_neighbours(rng, 2)
        if found is None:
            return None
        link, forward, start, end, _, prop, n = found
        name = self.s.named[n]
        how, word = rng.choice([("sum", "total"), ("avg", "average"), ("max", "highest"), ("min", "lowest")])
        rel = arrow(link, forward)
        ref = f"MATCH {node('a', start, name)}{rel}{node('b', end)} WITH DISTINCT b RETURN {how}(b.`{prop}`)"
        return Draft(
            (
                "What is the {word} {prop} of the {ends} {name} is connected to through {dir}{rel}?",
                "Across the {ends} linked to {name} by {dir}{rel}, what is the {word} {prop}?",
            ),
            {"name": name, "ends": end.plural, "prop": words(prop), "word": word, **self.rel_phrase(link, forward)},
            ref,
            number_gold,
            f"aggregation:{link.type}:{n}:{prop}:{how}",
        )

    def superlative(self, rng: random.Random) -> Draft | None:
        if rng.random() < 0.5:
            labels = [lb for lb in self.named_labels if lb.figures]
            if not labels:
                return None
            label = rng.choice(labels)
            prop = rng.choice(label.figures)
            order, word = rng.choice([("DESC", "highest"), ("ASC", "lowest")])
            k = rng.choice([1, 1, 3])
            ref = (
                f"MATCH (n:`{label.name}`) WHERE n.`{prop}` IS NOT NULL RETURN n.`{label.key}`, n.`{prop}` "
                f"ORDER BY n.`{prop}` {order} LIMIT {k + DISTRACTORS}"
            )
            templates = (
                ("Which {label} has the {word} {prop}?", "Name the {label} with the {word} {prop}.")
                if k == 1
                else ("Which three {labels} have the {word} {prop}?", "Name the three {labels} with the {word} {prop}.")
            )
            fields = {"label": label.words, "labels": label.plural, "prop": words(prop), "word": word}
            return Draft(
                templates, fields, ref, lambda rows: self._top(rows, k), f"top:{label.name}:{prop}:{order}:{k}"
            )
        if rng.random() < 0.6:
            return self._top_among(rng)
        link = rng.choice(self.links)
        forward, start, end, _ = self.side(link, rng)
        rel = arrow(link, forward)
        ref = (
            f"MATCH {node('a', start)}{rel}{node('b', end)} WITH a, count(DISTINCT b) AS n "
            f"RETURN a.`{start.key}`, n ORDER BY n DESC LIMIT {1 + DISTRACTORS}"
        )
        return Draft(
            (
                "Which {start} is connected to the most {ends} through {dir}{rel}?",
                "Which {start} has the largest number of {dir}{rel} relationships to {ends}?",
            ),
            {"start": start.words, "ends": end.plural, **self.rel_phrase(link, forward)},
            ref,
            lambda rows: self._top(rows, 1),
            f"most:{link.type}:{forward}",
        )

    def _top_among(self, rng: random.Random) -> Draft | None:
        """The top of a named entity's neighbours by a figure: "among the cities in France, which has the most
        people"."""
        found = self.figured_neighbours(rng, 3)
        if found is None:
            return None
        link, forward, start, end, _, prop, n = found
        name = self.s.named[n]
        order, word = rng.choice([("DESC", "highest"), ("ASC", "lowest")])
        ref = (
            f"MATCH {node('a', start, name)}{arrow(link, forward)}{node('b', end)} WHERE b.`{prop}` IS NOT NULL "
            f"RETURN DISTINCT b.`{end.key}`, b.`{prop}` ORDER BY b.`{prop}` {order} LIMIT {1 + DISTRACTORS}"
        )
        return Draft(
            (
                "Among the {ends} {name} is connected to through {dir}{rel}, which has the {word} {prop}?",
                "Which of the {ends} linked to {name} by {dir}{rel} has the {word} {prop}?",
            ),
            {"name": name, "ends": end.plural, "prop": words(prop), "word": word, **self.rel_phrase(link, forward)},
            ref,
            lambda rows: self._top(rows, 1),
            f"top-among:{link.type}:{forward}:{n}:{prop}:{order}",
        )

    def _top(self, rows: list[list[Any]], k: int) -> Gold | None:
        """The first k names of a ranking, when the k-th is strictly ahead of the next and all are nameable."""
        if len(rows) <= k or rows[k - 1][1] == rows[k][1] or any(rows[i][1] == rows[i + 1][1] for i in range(k - 1)):
            return None
        top = [str(r[0]) for r in rows[:k]]
        if not all(usable_name(t) and t.lower() in self.named_lower for t in top):
            return None
        items: list[str | list[str]] = [[t, *self.aliases[t.lower()]] if t.lower() in self.aliases else t for t in top]
        return g.topk(items, distractors=[str(r[0]) for r in rows[k:] if usable_name(r[0])])

    def multi_hop(self, rng: random.Random) -> Draft | None:
        hops = 3 if rng.random() < 0.3 else 2
        first = rng.choice(self.links)
        forward, start, here, _ = self.side(first, rng)
        chain = [(first, forward)]
        for _ in range(hops - 1):
            options = [(k, k.source == here.name) for k in self.links if here.name in (k.source, k.target)]
            if not options:
                return None
            link, fwd = rng.choice(options)
            fwd = fwd or link.symmetric
            chain.append((link, fwd))
            here = self.s.labels[link.target if fwd else link.source]
        end = here
        nodes = self.named_nodes(start)
        if not nodes:
            return None
        n = rng.choice(nodes)
        name = self.s.named[n]
        pattern = node("a", start, name)
        for i, (link, fwd) in enumerate(chain):
            label = self.s.labels[link.target if fwd else link.source]
            pattern += arrow(link, fwd) + (f"(x{i}:`{label.name}`)" if i < len(chain) - 1 else node("b", end))
        ref = f"MATCH {pattern} WHERE b <> a RETURN DISTINCT b.`{end.key}`"
        rels = [f"{'' if f or k.symmetric else 'incoming '}{k.words}" for k, f in chain]
        pool = self.pool(end, rng)
        fields = {"name": name, "ends": end.plural, "first": rels[0], "then": " and then ".join(rels[1:])}
        return Draft(
            (
                "Which {ends} are reached from {name} by following {first} and then {then}?",
                "Starting at {name}, follow {first}, then {then}: which {ends} do you reach?",
            ),
            fields,
            ref,
            lambda rows: self.names(rows, pool),
            f"multi:{n}:{rels}",
        )

    def path(self, rng: random.Random) -> Draft | None:
        nodes = sorted(self.s.named)
        a = rng.choice(nodes)
        reach = self.s.distances(a, 3)
        far = [b for b, d in reach.items() if d >= 2 and b in self.s.named]
        if not far:
            return None
        b = rng.choice(far)
        d = reach[b]
        la, lb = self.s.labels[self.s.label_of[a]], self.s.labels[self.s.label_of[b]]
        na, nb = self.s.named[a], self.s.named[b]
        if d == 2 and rng.random() < 0.5:
            middle = sorted(self.s.neighbours(a) & self.s.neighbours(b))
            labels = {self.s.label_of[m] for m in middle}
            if len(labels) != 1 or len(middle) > MAX_LISTED:
                return None
            lm = self.s.labels[labels.pop()]
            ref = f"MATCH {node('a', la, na)}--{node('m', lm)}--{node('b', lb, nb)} RETURN DISTINCT m.`{lm.key}`"
            pool = self.pool(lm, rng)
            return Draft(
                ("Which {middle} connects {a} and {b}?", "Through which {middle} are {a} and {b} linked?"),
                {"a": na, "b": nb, "middle": lm.words},
                ref,
                lambda rows: self.names(rows, pool, match="any"),
                f"via:{min(a, b)}:{max(a, b)}",
            )
        ref = (
            f"MATCH (a:`{la.name}` {{`{la.key}`: {lit(na)}}}), (b:`{lb.name}` {{`{lb.key}`: {lit(nb)}}}) "
            f"MATCH p = (a)-[*1..{d}]-(b) RETURN min(length(p))"
        )
        return Draft(
            (
                "How many relationships lie on the shortest path between {a} and {b}?",
                "What is the fewest number of relationship steps from {a} to {b}?",
            ),
            {"a": na, "b": nb},
            ref,
            lambda rows: self._hops(rows, d),
            f"path:{min(a, b)}:{max(a, b)}",
        )

    @staticmethod
    def _hops(rows: list[list[Any]], expected: int) -> Gold | None:
        gold = number_gold(rows, integer=True)
        return gold if gold is not None and gold["value"] == expected else None

    def filter(self, rng: random.Random) -> Draft | None:
        return self._filter_among(rng) if rng.random() < 0.6 else self._filter_all(rng)

    def _filter_among(self, rng: random.Random) -> Draft | None:
        """A named entity's neighbours whose figure passes a bound that keeps some and drops others."""
        found = self.figured_neighbours(rng, 3, 40)
        if found is None:
            return None
        link, forward, start, end, step, prop, n = found
        values = sorted({v for m in step[n] if isinstance(v := end.nodes[m].get(prop), (int, float))}, reverse=True)
        if len(values) < 2:  # one figure among them all: no bound keeps some and drops others
            return None
        k = rng.randint(1, min(MAX_LISTED, len(values) - 1))
        bound = _between(values[k - 1], values[k])
        name = self.s.named[n]
        ref = (
            f"MATCH {node('a', start, name)}{arrow(link, forward)}{node('b', end)} WHERE b.`{prop}` > {bound!r} "
            f"RETURN DISTINCT b.`{end.key}`"
        )
        pool = [self.s.named[m] for m in step[n] if m in self.s.named]
        return Draft(
            (
                "Which {ends} connected to {name} through {dir}{rel} have {a_prop} greater than {bound}?",
                "Of the {ends} linked to {name} by {dir}{rel}, which have {a_prop} above {bound}?",
            ),
            {
                "name": name,
                "ends": end.plural,
                "prop": words(prop),
                "a_prop": article(words(prop)),
                "bound": _figure(bound),
                **self.rel_phrase(link, forward),
            },
            ref,
            lambda rows: self.names(rows, pool),
            f"filter-among:{link.type}:{forward}:{n}:{prop}:{k}",
        )

    def _filter_all(self, rng: random.Random) -> Draft | None:
        labels = [lb for lb in self.named_labels if lb.figures]
        if not labels:
            return None
        label = rng.choice(labels)
        prop = rng.choice(label.figures)
        values = sorted({v for p in label.nodes.values() if isinstance(v := p.get(prop), (int, float))}, reverse=True)
        if len(values) < 8:
            return None
        k = rng.randint(2, 6)
        above = rng.random() < 0.5
        edge = (values[k - 1], values[k]) if above else (values[-k], values[-k - 1])
        bound = _between(*edge)
        op, word = (">", "greater than") if above else ("<", "less than")
        ref = f"MATCH (n:`{label.name}`) WHERE n.`{prop}` {op} {bound!r} RETURN n.`{label.key}`"
        pool = self.pool(label, rng)
        return Draft(
            ("Which {labels} have {a_prop} {word} {bound}?", "List the {labels} whose {prop} is {word} {bound}."),
            {
                "labels": label.plural,
                "prop": words(prop),
                "a_prop": article(words(prop)),
                "word": word,
                "bound": _figure(bound),
            },
            ref,
            lambda rows: self.names(rows, pool),
            f"filter:{label.name}:{prop}:{op}:{bound}",
        )

    def set_question(self, rng: random.Random) -> Draft | None:
        link = rng.choice(self.links)
        forward, start, end, step = self.side(link, rng)
        nodes = [n for n in self.named_nodes(start) if step.get(n)]
        if len(nodes) < 2:
            return None
        a = rng.choice(nodes)
        partners = [b for b in nodes if b != a and set(step[a]) & set(step[b]) and set(step[b]) - set(step[a])]
        if not partners:
            return None
        b = rng.choice(partners)
        na, nb = self.s.named[a], self.s.named[b]
        rel = arrow(link, forward)
        pool = self.pool(end, rng)
        fields = {"a": na, "b": nb, "ends": end.plural, **self.rel_phrase(link, forward)}
        if rng.random() < 0.5:
            ref = (
                f"MATCH {node('a', start, na)}{rel}{node('x', end)}, {node('b', start, nb)}{rel}(x) "
                f"RETURN DISTINCT x.`{end.key}`"
            )
            return Draft(
                (
                    "Which {ends} are connected through {dir}{rel} to both {a} and {b}?",
                    "Which {ends} do {a} and {b} share through {dir}{rel}?",
                ),
                fields,
                ref,
                lambda rows: self.names(rows, pool),
                f"both:{link.type}:{min(a, b)}:{max(a, b)}",
            )
        ref = (
            f"MATCH {node('a', start, na)}{rel}{node('x', end)}, {node('b', start, nb)} "
            f"WHERE NOT (b){rel}(x) RETURN DISTINCT x.`{end.key}`"
        )
        return Draft(
            (
                "Which {ends} is {a} connected to through {dir}{rel} that {b} is not?",
                "Through {dir}{rel}, which {ends} does {a} have that {b} does not?",
            ),
            fields,
            ref,
            lambda rows: self.names(rows, pool),
            f"only:{link.type}:{a}:{b}",
        )

    def non_existent(self, rng: random.Random) -> Draft | None:
        stored = self.stored
        name = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()
        if len(name) < 5 or any(name.lower() in t for t in stored):
            return None
        if rng.random() < 0.5 or not self.links:
            label = rng.choice(self.named_labels)
            props = label.figures + label.texts
            if not props:
                return None
            prop = rng.choice(props)
            return Draft(
                ("What is the {prop} of {name}?", "What {prop} does the {label} {name} have?"),
                {"prop": words(prop), "name": name, "label": label.words},
                f"MATCH {node('n', label, name)} RETURN n.`{prop}`",
                lambda rows: None if rows else g.absent(name, distractors=self.pool(label, rng, DISTRACTORS)),
                f"none:{name}",
            )
        link = rng.choice(self.links)
        forward, start, end, _ = self.side(link, rng)
        rel = arrow(link, forward)
        return Draft(
            (
                "Which {ends} is the {start} {name} connected to through {dir}{rel}?",
                "How many {ends} does the {start} {name} have {a_rel} relationship with?",
            ),
            {"name": name, "start": start.words, "ends": end.plural, **self.rel_phrase(link, forward)},
            f"MATCH {node('a', start, name)}{rel}{node('b', end)} RETURN b.`{end.key}`",
            lambda rows: None if rows else g.absent(name, distractors=self.pool(end, rng, DISTRACTORS)),
            f"none:{name}",
        )

    def by_category(self) -> dict[str, Callable[[random.Random], Draft | None]]:
        return {
            "lookup": self.lookup,
            "one-hop": self.one_hop,
            "count": self.count,
            "aggregation": self.aggregation,
            "superlative": self.superlative,
            "multi-hop": self.multi_hop,
            "path": self.path,
            "filter": self.filter,
            "set": self.set_question,
            "non-existent": self.non_existent,
        }


def _between(high: float, low: float) -> float:
    """A round bound strictly between two stored values (so no stored value sits on it)."""
    for digits in range(-6, 3):
        bound = round((high + low) / 2, digits) if digits > 0 else round((high + low) / 2 / 10**-digits) * 10**-digits
        if low < bound < high:
            return bound
    return (high + low) / 2


def _figure(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


async def generate(
    graph: Any, snap: Snapshot, prefix: str, seed: int, quotas: dict[str, int] | None = None
) -> tuple[list[Question], dict[str, int]]:
    """Up to `quotas[category]` questions per category (a small graph may offer fewer: the shortfall is
    returned per category). Each gold comes from running its reference query on `graph`."""
    rng = random.Random(seed)
    makers = Makers(snap).by_category()
    made: list[Question] = []
    short: dict[str, int] = {}
    seen: set[str] = set()
    for category, quota in (quotas or QUOTAS).items():
        count = attempts = 0
        while count < quota and attempts < quota * ATTEMPTS_PER_QUESTION:
            attempts += 1
            draft = makers[category](rng)
            if draft is None or draft.key in seen:
                continue
            seen.add(draft.key)
            rows = (await graph.query(draft.reference)).result_set
            gold = draft.gold([list(r) for r in rows])
            if gold is None:
                continue
            text = rng.choice(draft.templates).format(**draft.fields)
            if echoes(text, gold):
                continue
            count += 1
            made.append(
                Question(
                    id=f"{prefix}-{category}-{count:03d}",
                    category=category,
                    text=text,
                    gold={**without_question_names(text, gold), "reference": draft.reference},
                )
            )
        if count < quota:
            short[category] = quota - count
    return made, short
