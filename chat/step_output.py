"""A step's output as the chat page shows it: rows as a bounded table (a graph query's columns and rows, a list of
records, a record's fields), anything else as bounded text. Whatever the tool returned, the page gets a few KB
per step, with the counts to say what was left out. Pure functions."""

from __future__ import annotations

import json
from typing import Any

from contracts.redaction import redact_text, sanitize

MAX_ROWS = 20  # rows shown per step; row_count says how many there were
MAX_COLUMNS = 12
MAX_CELL_CHARS = 300
MAX_TEXT_CHARS = 4000


def step_output(output: str) -> dict[str, Any]:
    """`{"columns", "rows", "row_count", "truncated"}` when the output reads as a table, else `{"text"}`."""
    try:
        data = json.loads(output)
    except ValueError:
        data = None
    table = _table(data)
    if table is None:
        return {"text": _clipped(redact_text(output), MAX_TEXT_CHARS)}
    columns, rows, row_count, truncated = table
    shown = [[_cell(value) for value in row[:MAX_COLUMNS]] for row in rows[:MAX_ROWS]]
    return {
        "columns": [_clipped(str(c), MAX_CELL_CHARS) for c in columns[:MAX_COLUMNS]],
        "rows": shown,
        "row_count": row_count,
        "truncated": truncated or row_count > len(shown) or len(columns) > MAX_COLUMNS,
    }


def _table(data: Any) -> tuple[list[Any], list[list[Any]], int, bool] | None:
    """(columns, rows, row count, whether the tool itself cut the rows) of a tabular output; None otherwise."""
    if isinstance(data, dict) and isinstance(data.get("columns"), list) and isinstance(data.get("rows"), list):
        rows = [row if isinstance(row, list) else [row] for row in data["rows"]]
        count = data.get("row_count")
        return data["columns"], rows, count if isinstance(count, int) else len(rows), bool(data.get("truncated"))
    if isinstance(data, list) and data and all(isinstance(item, dict) for item in data):
        columns = list(dict.fromkeys(key for item in data for key in item))
        return columns, [[item.get(c) for c in columns] for item in data], len(data), False
    if isinstance(data, dict) and data:
        fields = [(key, value) for key, value in data.items() if not isinstance(value, (list, dict))]
        return (["field", "value"], [[key, value] for key, value in fields], len(fields), False) if fields else None
    return None


def _cell(value: Any) -> Any:
    """A cell as JSON the page can print: numbers, booleans and null as they are, anything else as bounded text."""
    value = sanitize(value, include_raw_outputs=True)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    return _clipped(text, MAX_CELL_CHARS)


def _clipped(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
