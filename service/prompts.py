"""Prompt templates live in configuration : packaged defaults, overridable by YAML."""

from __future__ import annotations

import os
from pathlib import Path
from string import Template

import yaml

_DEFAULTS = Path(__file__).with_name("prompts.yaml")


class PromptTemplates:
    def __init__(self, templates: dict[str, str]) -> None:
        self._templates = {name: Template(text) for name, text in templates.items()}

    @classmethod
    def load(cls, override_path: str | None = None) -> PromptTemplates:
        templates = yaml.safe_load(_DEFAULTS.read_text())
        path = override_path or os.environ.get("TGCA_PROMPTS")
        if path:
            overrides = yaml.safe_load(Path(path).read_text()) or {}
            if not isinstance(overrides, dict):
                raise ValueError(f"prompt overrides in {path} must be a mapping of name -> template")
            templates.update({str(k): str(v) for k, v in overrides.items()})
        return cls(templates)

    TOOL_PREFIX = "tool_"

    def tool_templates(self) -> dict[str, str]:
        """The Prompt tool's named templates: name -> the template's first line (its description)."""
        return {
            name[len(self.TOOL_PREFIX) :]: template.template.strip().splitlines()[0]
            for name, template in self._templates.items()
            if name.startswith(self.TOOL_PREFIX)
        }

    def render(self, name: str, **values: str) -> str:
        # safe_substitute: text from users or tools may itself contain '$'.
        return self._templates[name].safe_substitute(**values)
