"""Every setting the service reads is in docs/configuration.md with the environment variable that sets it: a
setting left out there is one an operator cannot find. Nested settings count too. A model with a section of its
own (`AgentSettings`, under `agent:`) needs a row per key there; one described in its parent's row (`queues`)
needs each key's variable named in that row."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic import BaseModel

from service.config import ServiceConfig

DOC = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


@dataclass(frozen=True)
class Setting:
    key: str  # as the YAML file nests it: "agent.max_retries"
    env: str  # TGCA_AGENT__MAX_RETRIES
    owner: type[BaseModel]  # the model that declares it
    parent: Setting | None  # the setting this one is nested in
    nested: bool  # a model of settings itself: its variables all begin with env + "__"

    @property
    def name(self) -> str:
        return self.key.rsplit(".", 1)[-1]


def settings(model: type[BaseModel], parent: Setting | None = None) -> list[Setting]:
    """Each field of `model` and, for a field that is itself a model, each of its fields, depth first."""
    found: list[Setting] = []
    for name, field in model.model_fields.items():
        key = f"{parent.key}.{name}" if parent else name
        env = f"{parent.env}__{name.upper()}" if parent else f"TGCA_{name.upper()}"
        nested = isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel)
        setting = Setting(key, env, model, parent, nested)
        found.append(setting)
        if nested:
            found += settings(field.annotation, setting)
    return found


def tables(text: str) -> dict[str, dict[str, str]]:
    """Per model a `## ` heading names in backticks, its table's rows by each key their first cell names."""
    found: dict[str, dict[str, str]] = {}
    for section in re.split(r"^## ", text, flags=re.MULTILINE)[1:]:
        heading, _, body = section.partition("\n")
        rows = {
            name: line
            for line in body.splitlines()
            if line.startswith("| `")
            for name in re.findall(r"`([^`]+)`", line.split("|")[1])
        }
        for model in re.findall(r"`(\w+)`", heading):
            found[model] = rows
    return found


TABLES = tables(DOC.read_text())


def row_of(setting: Setting) -> str | None:
    """The row that documents `setting`: in its model's own table, else in the row of the setting it is in."""
    table = TABLES.get(setting.owner.__name__)
    if table is not None:
        return table.get(setting.name)
    return row_of(setting.parent) if setting.parent else None


def names(row: str, variable: str, nested: bool) -> bool:
    """`variable` whole (TGCA_HTTP_MAX_STREAMS is not TGCA_HTTP_MAX_STREAMS_PER_CALLER), or as a prefix for a
    model of settings (TGCA_AGENT__*)."""
    end = "__" if nested else "(?![A-Z0-9_])"
    return re.search(rf"{re.escape(variable)}{end}", row) is not None


@pytest.mark.parametrize("setting", settings(ServiceConfig), ids=lambda s: s.key)
def test_every_setting_is_documented_with_its_variable(setting: Setting) -> None:
    row = row_of(setting)
    assert row is not None, f"{setting.key} is not in {DOC.name}"
    # A key listed in its parent's row may be named by its tail alone (`__PLANNING` after `TGCA_QUEUES__WORKFLOW`).
    own_table = setting.owner.__name__ in TABLES
    tail = setting.env[len(setting.parent.env) :] if setting.parent and not own_table else setting.env
    assert names(row, tail, setting.nested), f"{setting.key}'s row in {DOC.name} does not name {setting.env}"
