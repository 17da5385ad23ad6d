"""The Prompt tool's templates: the service's own (rendered here, completed by the LLM) or TrustGraph's
prompt service."""

from __future__ import annotations

from backends.llm import ChatModel
from backends.trustgraph import TrustGraphServices
from backends.trustgraph_config import ConfiguredTool, TrustGraphConfig
from contracts.tool_spec import ToolAccess
from service.prompts import PromptTemplates


class LocalTemplates:
    def __init__(self, prompts: PromptTemplates, llm: ChatModel) -> None:
        self.prompts = prompts
        self.llm = llm

    def templates(self) -> dict[str, str]:
        return self.prompts.tool_templates()

    def access(self, name: str) -> ToolAccess:
        return ToolAccess()

    async def apply(self, name: str, input_text: str, context: str) -> str:
        text = self.prompts.render(PromptTemplates.TOOL_PREFIX + name, input=input_text, context=context)
        return (await self.llm.chat([{"role": "user", "content": text}])).text


class TrustGraphTemplates:
    """TrustGraph's prompt service: the templates named in `trustgraph_prompts`, and the `tool` entries of type
    prompt in TrustGraph's config (each applies its own `template`, in its own groups)."""

    def __init__(
        self, services: TrustGraphServices, templates: dict[str, str], config: TrustGraphConfig | None = None
    ) -> None:
        self.services = services
        self._templates = templates
        self.config = config

    def _configured(self) -> dict[str, ConfiguredTool]:
        return self.config.current.of_kind("prompt") if self.config is not None else {}

    def templates(self) -> dict[str, str]:
        return {**self._templates, **{name: t.description for name, t in self._configured().items()}}

    def access(self, name: str) -> ToolAccess:
        configured = self._configured().get(name)
        return configured.access if configured is not None else ToolAccess()

    async def apply(self, name: str, input_text: str, context: str) -> str:
        configured = self._configured().get(name)
        if configured is None:
            return await self.services.prompt(name, {"input": input_text, "context": context})
        # The tool's first configured argument takes the input, as the planner gives the Prompt tool one.
        first = next((a["name"] for a in configured.arguments if a.get("name")), "input")
        return await self.services.prompt(
            str(configured.data.get("template") or name), {first: input_text, "context": context}
        )
