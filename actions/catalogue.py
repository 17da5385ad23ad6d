"""Questions about what can be done ("which actions are available for a purchase order?", "what does
makePayment require?"), answered from the ontology's action definitions: read, never written by a model,
so the answer can neither invent an action nor drop a precondition. And the other side of routing: a
request that opens with one of the actions' own verbs ("Cancel every draft order ...") asks for a change.

Pure: the ontology is the only source. Which class or action a question means comes from the ontology's
own names as the question writes them (a class's words, singular or plural; an action's name or words)."""

from __future__ import annotations

import re

from actions.ontology import Ontology
from actions.queries import describe_action
from contracts.query_path import Verification
from questions.named_terms import singular

CATALOGUE: Verification = "catalogue"  # SynthesisOutput.verification of an answer read from the action definitions
CATALOGUE_CONFIDENCE = 0.95  # read, not written by a model: only a definition that is wrong makes it wrong

# How a question about actions opens, or its question mark. "Can you pay ..." opens like a question and
# asks for a change: such a request only gets here after the action planner found no targets in it.
_QUESTION = re.compile(
    r"^\s*(which|what|how|can|could|may|does|do|is|are|list|show|tell|describe|explain)\b|\?\s*$", re.IGNORECASE
)
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


def is_question(text: str) -> bool:
    return _QUESTION.search(text) is not None


_ABOUT_ACTIONS = re.compile(r"\bactions?\b|\bcan (i|we|you|one|be) (do|done)\b", re.IGNORECASE)


def about_actions(ontology: Ontology, question: str) -> bool:
    """A question about the actions themselves: it asks about "actions" or names one of the ontology's."""
    return is_question(question) and (
        _ABOUT_ACTIONS.search(question) is not None
        or any(_mentions(question, name) for actions in ontology.actions.values() for name in actions)
    )


def _words(name: str) -> str:
    return _CAMEL.sub(" ", name).replace("_", " ").lower()


def _mentions(text: str, name: str) -> bool:
    wanted = _words(name)
    said = " ".join(singular(w) for w in re.findall(r"[a-z0-9]+", _CAMEL.sub(" ", text).lower()))
    plain = " ".join(re.findall(r"[a-z0-9]+", text.lower()))
    return any(re.search(rf"\b{re.escape(w)}\b", t) for w in {wanted, name.lower()} for t in (said, plain))


def asked_about(ontology: Ontology, question: str) -> list[tuple[str, str]]:
    """(class, action) pairs the question is about: the actions it names, else every action of the classes
    it names, else every action."""
    pairs = [(cls, name) for cls, actions in ontology.actions.items() for name in actions]
    named = [(cls, name) for cls, name in pairs if _mentions(question, name)]
    if named:
        return named
    classes = [cls for cls in ontology.actions if _mentions(question, cls)]
    return [(cls, name) for cls, name in pairs if cls in classes] or pairs


def catalogue_answer(ontology: Ontology, question: str) -> str:
    """The definitions of the actions the question is about, in plain words."""
    lines = []
    by_class: dict[str, list[str]] = {}
    for cls, name in asked_about(ontology, question):
        by_class.setdefault(cls, []).append(name)
    for cls, names in by_class.items():
        lines.append(f"Actions on {cls}: {', '.join(names)}.")
        for name in names:
            d = describe_action(ontology, cls, name)
            parts = [d["description"].rstrip(".")] if d["description"] else []
            if d["parameters"]:
                parts.append("needs " + ", ".join(f"{p} ({t})" for p, t in d["parameters"].items()))
            if d["preconditions"]:
                parts.append("refused when: " + "; ".join(d["preconditions"]).lower())
            parts.append("cannot be undone" if d["irreversible"] or not d["inverse"] else f"undone by {d['inverse']}")
            lines.append(f"- {name}: " + "; ".join(parts) + ".")
    return "\n".join(lines)


# Verbs that read data, never change it, whatever an action's description starts with.
_READING_VERBS = {
    "show",
    "list",
    "find",
    "get",
    "count",
    "tell",
    "give",
    "describe",
    "explain",
    "display",
    "search",
    "look",
    "check",
    "see",
    "view",
    "read",
    "compare",
    "summarize",
    "summarise",
    "which",
    "what",
}


def action_verbs(ontology: Ontology) -> set[str]:
    """The verbs the ontology's actions are asked with: a one-word action name ("cancel"), an action's
    identifier ("makepayment"), and the verb its description opens with ("Pay an approved order ...")."""
    verbs = set()
    for actions in ontology.actions.values():
        for name, action in actions.items():
            verbs.add(name.lower())
            if " " not in _words(name):
                verbs.add(_words(name))
            first = re.match(r"\s*([A-Za-z]+)\b", action.description)
            if first:
                verbs.add(first.group(1).lower())
    return verbs - _READING_VERBS


def asks_for_change(ontology: Ontology, request: str) -> str | None:
    """The action verb an imperative request opens with ("please cancel ...", "run makePayment on ..."),
    or None: a question, or a request that opens otherwise, is for the router's model to read."""
    if is_question(request):
        return None
    opening = re.findall(r"[A-Za-z]+", request)[:3]
    opening = [w.lower() for w in opening]
    while opening and opening[0] in ("please", "now", "then", "also", "and", "kindly"):
        opening = opening[1:]
    if not opening:
        return None
    if opening[0] in ("run", "execute", "perform", "apply", "do") and len(opening) > 1:
        return opening[1] if opening[1] in {n.lower() for acts in ontology.actions.values() for n in acts} else None
    return opening[0] if opening[0] in action_verbs(ontology) else None
