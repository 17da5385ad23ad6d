"""What the inline override prompt shows and how it reads an answer: "accept", "a", "skip not needed"
(a reason may follow the decision), "retry {"query": "MATCH ..."}" (new arguments as JSON)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic import TypeAdapter, ValidationError

from contracts.override import OverrideRequest, Role

SHORT = {"a": "accept", "r": "retry", "s": "skip", "b": "abort"}  # b: "a" is accept's
WHAT = {
    "accept": "use the result as it is",
    "retry": "run the step again, optionally with new arguments",
    "skip": "go on without it",
    "abort": "end the run",
}
APPROVAL_WHAT = {"accept": "execute", "skip": "change nothing", "abort": "end the run"}
_ARGUMENTS = TypeAdapter(dict[str, str])


@dataclass(frozen=True)
class Choice:
    decision: str
    reason: str = ""
    arguments: dict[str, str] | None = None


def describe(request: OverrideRequest) -> list[str]:
    """The lines that say what waits for the user and what each choice does."""
    if request.role is Role.APPROVE:
        lines = [_approval(request)]
    else:
        lines = [
            f"Step {request.step_id} ({request.function}) needs your decision: confidence {request.score:.2f} "
            f"is below {request.threshold:.2f} after {request.retries} retries ({request.reasoning})"
        ]
        lines += [f"    {name} = {value}" for name, value in request.arguments.items()]
    words = APPROVAL_WHAT if request.role is Role.APPROVE else WHAT
    lines += [f"  {_keyed(c)}: {words.get(c, c)}" for c in request.choices]
    return lines


def _approval(request: OverrideRequest) -> str:
    """An action batch's approval request in one sentence (its arguments are the batch's figures, as
    workflows/action_flow.py names them)."""
    a = request.arguments
    if not {"action_name", "targets", "entity_type"} <= a.keys():
        return f"Approval needed: {request.function} ({request.reasoning})"
    given = f" with {a['parameters']}" if a.get("parameters") else ""
    where = (f" of {a['related']}" if a.get("related") else "") + (f" where {a['filters']}" if a.get("filters") else "")
    dry = (
        f" ({a['would_succeed']} would succeed, {a['would_fail']} would fail)"
        if "would_succeed" in a and "would_fail" in a
        else ""
    )
    why = request.reasoning.removeprefix("approval needed: ")
    warning = (
        (f"LEFT OUT of the selection: {a['left_out']}. The targets may be more than the request asks for.\n")
        if a.get("left_out")
        else ""
    )
    return (
        f"{warning}Approval needed: {a['action_name']}{given} on {a['targets']} {a['entity_type']}{where}{dry}; "
        f"confidence {request.score:.2f}: {why}"
    )


def _keyed(choice: str) -> str:
    """The choice with its one-letter answer marked: [a]ccept, a[b]ort."""
    key = next((k for k, v in SHORT.items() if v == choice), "")
    at = choice.find(key) if key else -1
    return choice if at < 0 else f"{choice[:at]}[{key}]{choice[at + 1 :]}"


def question(request: OverrideRequest) -> str:
    keys = "/".join(k for k, v in SHORT.items() if v in request.choices)
    return f"Your decision [{keys}] (a reason may follow; Ctrl-D leaves it to someone else): "


def parse_choice(line: str, choices: list[str]) -> Choice:
    """The decision the line names (a choice, its letter or a prefix of one choice only), with the rest as
    its reason, or for retry the new arguments when the rest is a JSON object. ValueError says what is wrong."""
    word, _, rest = line.strip().partition(" ")
    word, rest = word.lower(), rest.strip()
    if not word:
        raise ValueError(f"choose one of {', '.join(choices)}")
    named = [SHORT[word]] if word in SHORT else [c for c in choices if c.startswith(word)]
    if len(named) != 1 or named[0] not in choices:
        raise ValueError(f"'{word}' is not a choice here; choose one of {', '.join(choices)}")
    decision = named[0]
    if decision == "retry" and rest.startswith("{"):
        return Choice(decision, arguments=parse_arguments(rest))
    return Choice(decision, reason=rest)


def parse_arguments(text: str) -> dict[str, str]:
    """New arguments for a retry: a JSON object of strings."""
    try:
        return _ARGUMENTS.validate_python(json.loads(text))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise ValueError(f'arguments must be a JSON object of strings, e.g. {{"query": "MATCH ..."}}: {exc}') from None
