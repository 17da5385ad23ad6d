"""The Prompt tool's templates: the service's own (rendered here, completed by the LLM) or TrustGraph's
prompt service."""

from __future__ import annotations

from backends.llm import ChatModel
from backends.trustgraph import TrustGraphServices
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
    def __init__(self, services: TrustGraphServices, templates: dict[str, str]) -> None:
        self.services = services
        self._templates = templates

    def templates(self) -> dict[str, str]:
        return dict(self._templates)

    def access(self, name: str) -> ToolAccess:
        return ToolAccess()

    async def apply(self, name: str, input_text: str, context: str) -> str:
        return await self.services.prompt(name, {"input": input_text, "context": context})
