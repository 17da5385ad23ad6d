"""Turning makers into a question set: each maker samples entities from the data with a seeded generator,
computes the gold answer from the same data and offers several phrasings; one is picked at random, so no
single wording dominates a category and the set is the same on every run. Names the question itself states
are never held against an answer that repeats them."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bench.kgqa.questions import Gold, Question
from bench.kgqa.scoring import echoes, without_question_names


@dataclass(frozen=True)
class Made:
    templates: tuple[str, ...]
    gold: Gold
    fields: dict[str, Any] = field(default_factory=dict)


Maker = Callable[[random.Random], Made | None]  # None: this sample does not make a good question, draw again

MAX_ATTEMPTS_PER_QUESTION = 60


def build(prefix: str, seed: int, makers: dict[str, list[Maker]], quotas: dict[str, int]) -> list[Question]:
    """`quotas[category]` questions per category, the makers of a category taking turns; no question twice."""
    rng = random.Random(seed)
    questions: list[Question] = []
    seen: set[str] = set()
    for category, quota in quotas.items():
        options = makers[category]
        made = attempts = 0
        while made < quota:
            attempts += 1
            if attempts > quota * MAX_ATTEMPTS_PER_QUESTION:
                raise RuntimeError(f"{prefix}: could only make {made} of {quota} '{category}' questions")
            maker = options[attempts % len(options)]
            result = maker(rng)
            if result is None:
                continue
            text = rng.choice(result.templates).format(**result.fields)
            key = f"{getattr(maker, '__name__', maker)}:{sorted(result.fields.items())}"
            if key in seen or echoes(text, result.gold):
                continue  # asked already (in any wording), or an answer could pass by repeating the question
            seen.add(key)
            made += 1
            questions.append(
                Question(
                    id=f"{prefix}-{category}-{made:03d}",
                    category=category,
                    text=text,
                    gold=without_question_names(text, result.gold),
                )
            )
    return questions
