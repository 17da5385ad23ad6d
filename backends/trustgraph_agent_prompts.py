"""TrustGraph's plan-then-execute templates, where the workspace customised them: `plan-create` sets out the
plan's steps, `plan-synthesise` writes the answer from their results. Each is asked of TrustGraph's prompt service
with the variables TrustGraph 2.11.1's agent passes (orchestrator/plan_pattern.py), and each call's tokens count
in the run's usage. A workspace that holds TrustGraph's default templates (backends/trustgraph_config.py,
`customised_templates`) keeps this service's own planner and synthesis prompts."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from backends.llm import Completion, counted
from backends.templates import TrustGraphTemplates

if TYPE_CHECKING:
    from backends import Backends
    from backends.trustgraph import TrustGraphServices
    from backends.trustgraph_config import TrustGraphConfig

PLAN_CREATE = "plan-create"
PLAN_SYNTHESISE = "plan-synthesise"


class AgentPrompts:
    def __init__(self, services: TrustGraphServices, config: TrustGraphConfig) -> None:
        self.services = services
        self.config = config

    def uses(self, template: str) -> bool:
        """Whether the workspace's own version of `template` replaces this service's prompt now."""
        return template in self.config.current.customised_prompts

    async def plan_create(self, question: str, framing: str, tools: list[dict[str, str]]) -> list[dict[str, Any]]:
        """The steps the template sets out (`goal`, `tool_hint`, `depends_on`); [] when it gave no list of them
        (TrustGraph's agent then plans one step: "Answer the question directly")."""
        response, _ = await self._prompt(PLAN_CREATE, {"question": question, "framing": framing, "tools": tools})
        try:
            steps = json.loads(response.get("object") or "null")
        except ValueError:
            return []
        return [s for s in steps if isinstance(s, dict)] if isinstance(steps, list) else []

    async def plan_synthesise(self, question: str, framing: str, steps: list[dict[str, Any]]) -> Completion:
        """The answer the template writes from the steps (`index`, `goal`, `result`)."""
        _, completion = await self._prompt(PLAN_SYNTHESISE, {"question": question, "framing": framing, "steps": steps})
        return completion

    async def _prompt(self, template: str, variables: dict[str, Any]) -> tuple[dict[str, Any], Completion]:
        """One PromptRequest, every variable as JSON text (as trustgraph-base's PromptClient sends them): its
        first response (a non-streaming answer), and that as a completion counted in the run's usage."""
        payload = {"id": template, "terms": {k: json.dumps(v) for k, v in variables.items()}, "streaming": False}
        request_topic, response_topic = self.services.route("prompt")
        async for response in self.services.rr.stream(request_topic, response_topic, payload, self.services.timeout_s):
            return response, counted(
                Completion(
                    text=str(response.get("text") or ""),
                    model=str(response.get("model") or ""),
                    in_tokens=response.get("in_token"),
                    out_tokens=response.get("out_token"),
                )
            )
        return {}, Completion(text="", model="", in_tokens=None, out_tokens=None)


def agent_prompts(backends: Backends) -> AgentPrompts | None:
    """The workspace's customised templates, in TrustGraph mode with its config read; None otherwise. TrustGraph's
    prompt service is the one the Prompt tool's templates go to."""
    templates = backends.templates
    if backends.trustgraph_config is None or not isinstance(templates, TrustGraphTemplates):
        return None
    return AgentPrompts(templates.services, backends.trustgraph_config)
