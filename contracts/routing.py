"""The router's answer: which path a question takes."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field

from contracts.llm_usage import LlmUsage


class Intent(StrEnum):
    QUERY = "QUERY"  # find, count or explore data: the read-only planner and its tools
    ACTION = "ACTION"  # change entities: the action path (dry run, approval, batch)
    ANSWER = "ANSWER"  # a direct answer, no tools


class RouteInput(BaseModel):
    question: str


class RouteOutput(BaseModel):
    intent: Intent
    reasoning: str = ""
    llm_usage: LlmUsage = Field(default_factory=LlmUsage)  # filled by the worker (contracts/llm_usage.py)
