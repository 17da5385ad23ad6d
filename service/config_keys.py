"""Unknown configuration keys are errors, not silently ignored defaults: `max_retrys: 5` in the file or
TGCA_AGENT__MAX_RETRYS=5 in the environment names the key and the closest one the service knows."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from pydantic import AliasChoices, BaseModel

# TGCA_* variables that are read outside the settings model (by the CLI, the stack and the prompts loader).
OTHER_ENV = {
    "TGCA_CONFIG",
    "TGCA_PROMPTS",
    "TGCA_OVERRIDE_KEY",
    "TGCA_DATA_DIR",
    "TGCA_MODEL_DIR",
    "TGCA_TEST_ARTIFACTS",
    "TGCA_LLM_SERVER_ARGS",
}
ENV_PREFIX = "TGCA_"


def _known(model: type[BaseModel]) -> dict[str, type[BaseModel] | None]:
    """The model's keys (field names and their plain aliases) -> the nested settings model, if any."""
    known: dict[str, type[BaseModel] | None] = {}
    for name, field in model.model_fields.items():
        nested = (
            field.annotation if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel) else None
        )
        known[name] = nested
        if isinstance(field.alias, str):
            known[field.alias] = nested
        if isinstance(field.validation_alias, AliasChoices):  # e.g. PULSAR_HOST, as the sources may key it
            known.update({choice: nested for choice in field.validation_alias.choices if isinstance(choice, str)})
    return known


def _suggest(key: str, known: list[str]) -> str:
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


def unknown_keys(data: Mapping[str, Any], model: type[BaseModel], where: str = "") -> dict[str, str]:
    """Each key of `data` (the settings as read from the file and environment) that `model` does not have,
    nested settings included: its dotted path -> a message naming it and the closest known key."""
    known = _known(model)
    problems = {}
    for key, value in data.items():
        path = f"{where}{key}"
        if key not in known:
            problems[path.lower()] = f"unknown setting '{path}'{_suggest(str(key), list(known))}"
        elif known[key] is not None and isinstance(value, Mapping):
            problems |= unknown_keys(value, known[key], f"{path}.")  # type: ignore[arg-type]
    return problems


def unknown_settings(data: Mapping[str, Any], environ: Mapping[str, str], model: type[BaseModel]) -> list[str]:
    """Every unknown key, once: a misspelt environment variable is named as such (the environment source
    also hands its nested keys over as settings)."""
    from_env = unknown_env(environ, model)
    from_data = unknown_keys(data, model)
    return [*from_env.values(), *(message for path, message in from_data.items() if path not in from_env)]


def unknown_env(environ: Mapping[str, str], model: type[BaseModel], nested_delimiter: str = "__") -> dict[str, str]:
    """Each TGCA_* environment variable that names no setting: the setting path it spells -> a message
    naming the closest variable."""
    problems = {}
    for variable in sorted(environ):
        if not variable.startswith(ENV_PREFIX) or variable in OTHER_ENV:
            continue
        parts = variable[len(ENV_PREFIX) :].lower().split(nested_delimiter)
        current: type[BaseModel] | None = model
        for depth, part in enumerate(parts):
            known = _known(current) if current is not None else {}
            if part not in known:
                stem = ENV_PREFIX + nested_delimiter.join(p.upper() for p in parts[:depth])
                names = [(stem + (nested_delimiter if depth else "") + k.upper()) for k in known]
                if depth == 0:
                    names += sorted(OTHER_ENV)
                problems[".".join(parts)] = f"unknown environment variable {variable}{_suggest(variable, names)}"
                break
            current = known[part]
            if current is None:
                break  # a plain value: anything after it is that value's own business (e.g. a JSON dict)
    return problems
