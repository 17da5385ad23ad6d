"""What a labelled question is: an id, a category, the text, a gold answer a program can check, and the
split it belongs to. Gold answers are plain JSON so they travel with every result line.

Gold kinds (`kind`):
- `number`: `value`, `rel_tol` (relative), `integer` (exact match for counts);
- `names`: `items` (each a name or a list of accepted spellings), `match` `all` or `any`, `distractors`
  (names of the same kind that must not appear: an answer that lists everything is not right);
- `topk`: the k names (`items`) of a ranking (k may be 1: "which has the most"); every one must be named,
  before any of the `distractors` (the rest of the ranking: "A, then B" is right when A alone was asked);
- `date`: `value` as ISO yyyy-mm-dd;
- `absent`: the entity does not exist (`entity`); the answer must say so and must not put a real name of
  the asked kind (`distractors`) or, with `forbid_numbers`, a figure in its place;
- `boolean`: `value` true or false, for a yes/no question; the first word of the answer that says yes or no
  must say the right one;
- `all`: every one of `parts` must hold (a name and its figure).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

Gold = dict[str, Any]

CATEGORIES = (
    "lookup",
    "one-hop",
    "count",
    "aggregation",
    "superlative",
    "multi-hop",
    "path",
    "filter",
    "set",
    "comparison",
    "non-existent",
)
SPLITS = ("calibration", "heldout")
CALIBRATION_SHARE = 40  # percent of questions a calibrator may be fitted on; the rest are held out


@dataclass(frozen=True)
class Question:
    id: str
    category: str
    text: str
    gold: Gold

    @property
    def split(self) -> str:
        return split_of(self.id)


def stable_hash(text: str) -> int:
    """Same value on every machine and Python run (unlike hash()), so splits and orders never move."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def split_of(question_id: str) -> str:
    """About 40 % calibration, 60 % held out, decided by the id alone: a question never changes sides."""
    return "calibration" if stable_hash(f"split:{question_id}") % 100 < CALIBRATION_SHARE else "heldout"


def run_order(questions: list[Question]) -> list[Question]:
    """The categories in turn, each in a fixed shuffled order: the first N of a `--limit N` run cover every
    category (N >= 8) instead of taking one."""
    queues: dict[str, list[Question]] = {}
    for q in sorted(questions, key=lambda q: stable_hash(f"order:{q.id}")):
        queues.setdefault(q.category, []).append(q)
    turn = sorted(queues, key=lambda c: CATEGORIES.index(c) if c in CATEGORIES else len(CATEGORIES))
    ordered: list[Question] = []
    for i in range(max((len(v) for v in queues.values()), default=0)):
        ordered += [queues[c][i] for c in turn if i < len(queues[c])]
    return ordered


def select(questions: list[Question], split: str, limit: int | None = None) -> list[Question]:
    chosen = run_order([q for q in questions if split == "all" or q.split == split])
    return chosen[:limit] if limit is not None else chosen


def number(value: float, *, integer: bool = False, rel_tol: float = 0.005) -> Gold:
    return {"kind": "number", "value": value, "integer": integer, "rel_tol": rel_tol}


def count(value: int) -> Gold:
    return number(value, integer=True)


def names(items: list[str | list[str]], *, match: str = "all", distractors: list[str] | None = None) -> Gold:
    expected = {n.lower() for item in items for n in ([item] if isinstance(item, str) else item)}
    return {
        "kind": "names",
        "items": items,
        "match": match,
        "distractors": sorted({d for d in distractors or [] if d.lower() not in expected}),
    }


def name(item: str | list[str], distractors: list[str] | None = None) -> Gold:
    return names([item], distractors=distractors)


def topk(items: list[str | list[str]], distractors: list[str] | None = None) -> Gold:
    return {**names(items, distractors=distractors), "kind": "topk"}


def date(value: str) -> Gold:
    return {"kind": "date", "value": value}


def absent(entity: str, *, distractors: list[str] | None = None, forbid_numbers: bool = False) -> Gold:
    return {
        "kind": "absent",
        "entity": entity,
        "distractors": sorted(set(distractors or [])),
        "forbid_numbers": forbid_numbers,
    }


def boolean(value: bool) -> Gold:
    return {"kind": "boolean", "value": value}


def both(*parts: Gold) -> Gold:
    return {"kind": "all", "parts": list(parts)}
