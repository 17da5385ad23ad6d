"""What an activity's LLM calls used, carried back in its output (`llm_usage`) so that the workflow can sum a
run's usage the way TrustGraph's agent does (its UsageTracker): every call's tokens added up, the last call's
model named, on the message that ends the dialog."""

from __future__ import annotations

from pydantic import BaseModel


class LlmUsage(BaseModel):
    """Filled by the worker (worker/llm_usage.py), never by the activity itself; zero in outputs recorded
    before it existed. A server that reports no token counts adds a call and no tokens."""

    calls: int = 0
    in_tokens: int = 0
    out_tokens: int = 0
    model: str = ""  # the last call's, as the server named it

    def plus(self, other: LlmUsage) -> LlmUsage:
        return LlmUsage(
            calls=self.calls + other.calls,
            in_tokens=self.in_tokens + other.in_tokens,
            out_tokens=self.out_tokens + other.out_tokens,
            model=other.model or self.model,
        )
