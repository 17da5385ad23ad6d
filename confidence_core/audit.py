"""The audit record of one run (seed section 6.2) and its sanitizer: secrets and tokens are redacted,
and raw tool outputs are dropped unless `include_raw_outputs` is on."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

REDACTED = "[REDACTED]"
_SECRET_KEY = re.compile(r"(token|secret|passw(or)?d|api[_-]?key|authorization|credential|private[_-]?key)", re.I)
_SECRET_VALUES = [
    re.compile(r"\bBearer\s+[A-Za-z0-9._~+/=\-]{8,}", re.I),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"\b(gh[pousr]|xox[abpr])[-_][A-Za-z0-9_\-]{16,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"(?i)\b(password|passwd|secret|api[_-]?key|token)\s*[:=]\s*[^\s,;'\"]+"),
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"),
]
RAW_OUTPUT_KEYS = {"output"}


class AttemptAudit(BaseModel):
    rung: str
    arguments: dict[str, str]
    confidence_score: float
    reasoning: str
    output: str = ""


class StepAudit(BaseModel):
    step_id: str
    function: str
    start_time: str
    end_time: str
    confidence_score: float | None
    retry_count: int
    success: bool
    outcome: str
    attempts: list[AttemptAudit] = Field(default_factory=list)
    override: dict[str, str] | None = None


class AuditRecord(BaseModel):
    execution_id: str
    timestamp: str
    request: dict[str, Any]
    plan: dict[str, Any]
    execution: list[StepAudit]
    final_confidence: float | None
    total_duration_ms: int
    outcome: str
    notes: list[str] = Field(default_factory=list)


def _redact_text(text: str) -> str:
    for pattern in _SECRET_VALUES:
        text = pattern.sub(REDACTED, text)
    return text


def sanitize(value: Any, include_raw_outputs: bool = False) -> Any:
    """A copy with secret-looking keys and values redacted and, unless asked for, raw outputs dropped."""
    if isinstance(value, dict):
        clean: dict[str, Any] = {}
        for key, item in value.items():
            if not include_raw_outputs and key in RAW_OUTPUT_KEYS:
                continue
            if _SECRET_KEY.search(str(key)) and isinstance(item, (str, int, float)):
                clean[key] = REDACTED
            else:
                clean[key] = sanitize(item, include_raw_outputs)
        return clean
    if isinstance(value, list):
        return [sanitize(v, include_raw_outputs) for v in value]
    if isinstance(value, str):
        return _redact_text(value)
    return value
