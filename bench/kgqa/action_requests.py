"""Labelled action requests for any graph with an ontology's actions: each request names its targets the way
people do (by a related entity, by ids, by a stated status, through a related entity's property, with an
amount, with an exception), and its gold target set is computed by a reference query built from the
ontology's names alone. Nothing here knows a domain: classes, relationships, properties, values and names
all come from the ontology and the live graph.

    requests = await generate(graph, ontology, seed=1, per_kind=1)
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any

from actions.ontology import ActionDefinition, Ontology
from backends.graph_store import GraphStore

KINDS = ("related_status", "related_all", "ids", "status_only", "related_property", "amount", "negated")
ROUTING_KINDS = ("query", "catalogue")  # not changes: read-only questions, and questions about the actions
MAX_CATEGORY_VALUES = 30
PARAMETER_SAMPLES = {
    "string": ["quarterly review", "supplier dispute", "audit follow-up"],
    "date": ["2031-01-15", "2031-03-31"],
    "integer": [3, 12],
    "float": [250.5, 1200.0],
    "boolean": [True],
}


@dataclass
class ActionRequest:
    id: str
    kind: str
    request: str
    entity_type: str
    action: str
    gold: list[str]  # the keys of the entities the request names as targets
    fields: dict[str, Any] = field(default_factory=dict)
    route: str = "ACTION"  # the router's right answer: ACTION, QUERY (read-only) or ANSWER (about the actions)


def class_words(name: str) -> str:
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name).replace("_", " ").lower()


def plural(words: str) -> str:
    if re.search(r"(s|x|ch|sh)$", words):
        return words + "es"
    if re.search(r"[^aeiou]y$", words):
        return words[:-1] + "ies"
    return words + "s"


def verb(action_name: str, rng: random.Random) -> str:
    """How a person asks for the action: its name as a verb when it is one word, or 'run <action> on'."""
    words = class_words(action_name)
    if " " not in words and rng.random() < 0.75:
        return words.capitalize()
    return f"Run {action_name} on"


def parameters_text(action: ActionDefinition, rng: random.Random) -> str:
    parts = [f"{class_words(name)}: {rng.choice(PARAMETER_SAMPLES[kind])}" for name, kind in action.parameters.items()]
    return (", " + ", ".join(parts)) if parts else ""


class Generator:
    def __init__(self, graph: GraphStore, ontology: Ontology, rng: random.Random) -> None:
        self.graph = graph
        self.ontology = ontology
        self.rng = rng

    async def rows(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        return (await self.graph.ro_query(query, params or {}, max_rows=100_000, timeout_ms=60_000)).rows

    async def categories(self, class_name: str) -> dict[str, list[str]]:
        """The class's string properties with few distinct values (a status, a country), and their values."""
        cls = self.ontology.classes[class_name]
        found = {}
        for prop, kind in cls.properties.items():
            if kind != "string" or prop in (cls.key, cls.display):
                continue
            values = [
                str(r[0])
                for r in await self.rows(
                    f"MATCH (e:`{class_name}`) WHERE e.`{prop}` IS NOT NULL RETURN DISTINCT e.`{prop}` "
                    f"LIMIT {MAX_CATEGORY_VALUES + 1}"
                )
            ]
            if 1 < len(values) <= MAX_CATEGORY_VALUES:
                found[prop] = sorted(values)
        return found

    def related_classes(self, class_name: str) -> list[tuple[str, str]]:
        """(related class, relationship type) for each class one relationship away."""
        return [
            (r.to if r.from_ == class_name else r.from_, r.type)
            for r in self.ontology.relationships_of(class_name)
            if {r.from_, r.to} != {class_name}
        ]

    async def make(self, kind: str, class_name: str, action_name: str) -> ActionRequest | None:
        cls = self.ontology.classes[class_name]
        action = self.ontology.actions[class_name][action_name]
        rng = self.rng
        target_words = class_words(class_name)
        categories = await self.categories(class_name)
        status_prop = rng.choice(sorted(categories)) if categories else ""
        status = rng.choice(categories[status_prop]) if status_prop else ""
        # Mostly a value the action applies to, as people ask ("submit the draft orders"), sometimes any.
        allowed = [
            v
            for p in action.preconditions
            if p.property == status_prop and p.op in ("eq", "in")
            for v in (p.value if isinstance(p.value, list) else [p.value])
            if str(v) in categories[status_prop]
        ]
        if allowed and rng.random() < 0.7:
            status = str(rng.choice(allowed))
        related = self.related_classes(class_name)
        rel_class, rel_type = rng.choice(related) if related else ("", "")
        rel = self.ontology.classes[rel_class] if rel_class else None
        head = f"{verb(action_name, rng)} "
        tail = parameters_text(action, rng)
        key = f"e.`{cls.key}`"
        if kind in ("related_status", "related_all", "negated", "amount"):
            if rel is None or (kind != "related_all" and not status):
                return None
            status_cond = f" AND e.`{status_prop}` = $status" if kind != "related_all" else ""
            names = await self.rows(
                f"MATCH (e:`{class_name}`)-[:`{rel_type}`]-(x:`{rel_class}`) WHERE true{status_cond} "
                f"RETURN x.`{rel.display}`, count(DISTINCT e) ORDER BY x.`{rel.display}`",
                {"status": status},
            )
            names = [n for n in names if n[1] >= 2 and isinstance(n[0], str)]
            if not names:
                return None
            name = rng.choice(names)[0]
            rel_words = class_words(rel_class)
            params = {"status": status, "name": name}
            if kind == "related_all":
                text = rng.choice(
                    [
                        f"{head}all {plural(target_words)} of {rel_words} {name}{tail}",
                        f"{head}every {target_words} of {rel_words} {name}{tail}",
                    ]
                )
                gold_q = (
                    f"MATCH (e:`{class_name}`)-[:`{rel_type}`]-(x:`{rel_class}`) WHERE x.`{rel.display}` = $name "
                    f"RETURN DISTINCT {key}"
                )
            elif kind == "related_status":
                text = rng.choice(
                    [
                        f"{head}all {status} {plural(target_words)} of {rel_words} {name}{tail}",
                        f"{head}the {status} {plural(target_words)} of {name}{tail}",
                        f"{head}every {status} {target_words} of {rel_words} {name}{tail}",
                    ]
                )
                gold_q = (
                    f"MATCH (e:`{class_name}`)-[:`{rel_type}`]-(x:`{rel_class}`) WHERE x.`{rel.display}` = $name "
                    f"AND e.`{status_prop}` = $status RETURN DISTINCT {key}"
                )
            elif kind == "negated":
                text = rng.choice(
                    [
                        f"{head}all {status} {plural(target_words)} except those of {rel_words} {name}{tail}",
                        f"{head}every {status} {target_words} that is not of {rel_words} {name}{tail}",
                    ]
                )
                gold_q = (
                    f"MATCH (e:`{class_name}`) WHERE e.`{status_prop}` = $status AND NOT "
                    f"(e)-[:`{rel_type}`]-(:`{rel_class}` {{`{rel.display}`: $name}}) RETURN DISTINCT {key}"
                )
            else:
                numeric = [p for p, t in cls.properties.items() if t in ("float", "integer")]
                if not numeric:
                    return None
                prop = rng.choice(numeric)
                values = sorted(
                    r[0]
                    for r in await self.rows(
                        f"MATCH (e:`{class_name}`)-[:`{rel_type}`]-(x:`{rel_class}`) WHERE x.`{rel.display}` = $name "
                        f"AND e.`{status_prop}` = $status AND e.`{prop}` IS NOT NULL RETURN e.`{prop}`",
                        params,
                    )
                )
                if len(values) < 2:
                    return None
                amount = int(values[len(values) // 2])
                params["amount"] = amount
                text = (
                    f"{head}the {status} {plural(target_words)} of {rel_words} {name} with {class_words(prop)} "
                    f"over {amount:,}{tail}"
                )
                gold_q = (
                    f"MATCH (e:`{class_name}`)-[:`{rel_type}`]-(x:`{rel_class}`) WHERE x.`{rel.display}` = $name "
                    f"AND e.`{status_prop}` = $status AND e.`{prop}` > $amount RETURN DISTINCT {key}"
                )
        elif kind == "query":  # the same entities asked about, nothing to change
            if rel is None:
                return None
            names = await self.rows(
                f"MATCH (e:`{class_name}`)-[:`{rel_type}`]-(x:`{rel_class}`) "
                f"RETURN DISTINCT x.`{rel.display}` ORDER BY x.`{rel.display}`"
            )
            names = [n[0] for n in names if isinstance(n[0], str)]
            if not names:
                return None
            name, rel_words = rng.choice(names), class_words(rel_class)
            status_text = f"{status} " if status else ""
            text = rng.choice(
                [
                    f"Which {status_text}{plural(target_words)} does {rel_words} {name} have?",
                    f"How many {status_text}{plural(target_words)} of {rel_words} {name} are there?",
                    f"List the {status_text}{plural(target_words)} of {name}.",
                    f"Show me every {target_words} of {rel_words} {name}",
                ]
            )
            return self.request(kind, text, class_name, action_name, [], route="QUERY")
        elif kind == "catalogue":
            text = rng.choice(
                [
                    f"Which actions are available for a {target_words}?",
                    f"What does {action_name} require?",
                    f"What can I do with {plural(target_words)}?",
                    f"What actions can be taken on {plural(target_words)}?",
                    f"Explain what {action_name} does.",
                ]
            )
            return self.request(kind, text, class_name, action_name, [], route="ANSWER")
        elif kind == "ids":
            ids = [str(r[0]) for r in await self.rows(f"MATCH (e:`{class_name}`) RETURN {key} ORDER BY {key}")]
            chosen = sorted(rng.sample(ids, min(len(ids), rng.choice([1, 2, 3]))))
            if not chosen:
                return None
            listed = chosen[0] if len(chosen) == 1 else ", ".join(chosen[:-1]) + f" and {chosen[-1]}"
            text = (
                f"{head}{target_words} {listed}{tail}"
                if len(chosen) == 1
                else f"{head}{plural(target_words)} {listed}{tail}"
            )
            return self.request(kind, text, class_name, action_name, chosen)
        elif kind == "status_only":
            if not status:
                return None
            params = {"status": status}
            text = rng.choice(
                [f"{head}all {status} {plural(target_words)}{tail}", f"{head}every {status} {target_words}{tail}"]
            )
            gold_q = f"MATCH (e:`{class_name}`) WHERE e.`{status_prop}` = $status RETURN DISTINCT {key}"
        else:  # related_property: through a category property of a related class
            options = []
            for other, rel_t in related:
                for prop, values in (await self.categories(other)).items():
                    options += [(other, rel_t, prop, v) for v in values]
            if not options or not status:
                return None
            other, rel_t, prop, value = rng.choice(options)
            params = {"status": status, "value": value}
            text = (
                f"{head}the {status} {plural(target_words)} of {plural(class_words(other))} whose "
                f"{class_words(prop)} is {value}{tail}"
            )
            gold_q = (
                f"MATCH (e:`{class_name}`)-[:`{rel_t}`]-(x:`{other}`) WHERE x.`{prop}` = $value "
                f"AND e.`{status_prop}` = $status RETURN DISTINCT {key}"
            )
        gold = sorted(str(r[0]) for r in await self.rows(gold_q, params))
        if not gold:
            return None
        return self.request(kind, text, class_name, action_name, gold)

    def request(
        self, kind: str, text: str, class_name: str, action_name: str, gold: list[str], route: str = "ACTION"
    ) -> ActionRequest:
        return ActionRequest(
            id="", kind=kind, request=text, entity_type=class_name, action=action_name, gold=gold, route=route
        )


async def generate(
    graph: GraphStore,
    ontology: Ontology,
    seed: int,
    per_kind: int = 1,
    kinds: tuple[str, ...] = (*KINDS, *ROUTING_KINDS),
) -> list[ActionRequest]:
    """`per_kind` requests of each kind for each action of the ontology (fewer where the data cannot make
    one), the same on every run of a seed; no request twice."""
    rng = random.Random(seed)
    made: list[ActionRequest] = []
    seen: set[str] = set()
    gen = Generator(graph, ontology, rng)
    for class_name, actions in sorted(ontology.actions.items()):
        for action_name in sorted(actions):
            for kind in kinds:
                count = 0
                for _ in range(per_kind * 20):
                    if count == per_kind:
                        break
                    request = await gen.make(kind, class_name, action_name)
                    if request is None or request.request in seen:
                        continue
                    seen.add(request.request)
                    request.id = f"{ontology.name}-a{seed}-{len(made) + 1:04d}"
                    made.append(request)
                    count += 1
    return made
