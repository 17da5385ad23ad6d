"""The LLM server's grammar sampling (embedded/grammar_sampling.py) on the real local model: the planner's JSON
schema still holds every token, and at temperature 0 the plan is the one llama-cpp-python's own sampler writes."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from embedded.grammar_sampling import GrammarCheckedSampler, install
from planning.plan_parser import plan_json_schema
from tools.registry import all_tools, default_tool_names

llama_cpp = pytest.importorskip("llama_cpp")
pytestmark = pytest.mark.real_llm

SYSTEM = (
    "You plan how to answer questions over a graph database of suppliers, purchase orders and invoices. "
    "Reply with the plan as JSON."
)
QUESTIONS = [
    "How many purchase orders were issued to Globex Supply?",
    "By which date must invoice INV-00549 be paid?",
    "Which suppliers are based in Germany, and what do they supply?",
]


@pytest.fixture(scope="module")
def model() -> Iterator[Any]:
    from embedded.model_weights import resolve_model

    llm = llama_cpp.Llama(
        str(resolve_model().path),
        n_ctx=2048,
        n_threads=os.cpu_count() or 2,
        n_batch=64,
        logits_all=False,
        verbose=False,
    )
    yield llm
    llm.close()


@pytest.fixture(scope="module")
def plan_schema() -> dict[str, Any]:
    # The default tools that need no configured choices (templates, MCP tools): an empty enum is no grammar.
    specs = {
        name: tool.spec
        for name, tool in all_tools().items()
        if name in default_tool_names() and not tool.spec.choice_argument
    }
    return plan_json_schema(specs, max_steps=4)


def _use_checked_sampling(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server's sampling for this test only: the class attribute is put back afterwards."""
    monkeypatch.setattr(llama_cpp.Llama, "_init_sampler", llama_cpp.Llama._init_sampler)
    assert install()


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> None:
    _use_checked_sampling(monkeypatch)


def _completion(
    model: Any, schema: dict[str, Any], question: str, temperature: float, system: str = SYSTEM, seed: int | None = None
) -> dict[str, Any]:
    if seed is not None:
        model.set_seed(seed)
    # The whole prompt evaluated afresh every time: a reused prefix is evaluated in other batches, whose float
    # rounding can flip a near-tie between two tokens ("COUNT" / "count") whatever the sampler.
    model.reset()
    out = model.create_chat_completion(
        [{"role": "system", "content": system}, {"role": "user", "content": question}],
        temperature=temperature,
        max_tokens=400,
        response_format={"type": "json_object", "schema": schema},
    )
    return out["choices"][0]


def _ask(model: Any, schema: dict[str, Any], question: str, temperature: float, system: str = SYSTEM) -> str:
    choice = _completion(model, schema, question, temperature, system)
    assert choice["finish_reason"] == "stop", choice
    return choice["message"]["content"]


def test_at_temperature_zero_the_plan_is_the_one_the_stock_sampler_writes(
    model: Any, plan_schema: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    stock = [_ask(model, plan_schema, q, 0.0) for q in QUESTIONS]
    _use_checked_sampling(monkeypatch)
    checked = [_ask(model, plan_schema, q, 0.0) for q in QUESTIONS]
    assert isinstance(model._sampler, GrammarCheckedSampler)
    assert checked == stock
    for text in checked:
        jsonschema.validate(json.loads(text), plan_schema)


@pytest.mark.usefixtures("checked")
def test_a_model_that_wants_prose_still_writes_only_what_the_schema_allows(
    model: Any, plan_schema: dict[str, Any]
) -> None:
    """Asked for a sentence, the model's own first choice is prose: the grammar refuses it and the full pass
    picks the allowed token, so the output is still a plan."""
    text = _ask(
        model,
        plan_schema,
        QUESTIONS[0],
        0.0,
        system="Answer in one friendly English sentence. Never write JSON or code.",
    )
    sampler = model._sampler
    assert isinstance(sampler, GrammarCheckedSampler)
    assert sampler.rejected >= 1
    assert sampler.rejected < sampler.tokens  # most tokens were only checked, which is the point
    jsonschema.validate(json.loads(text), plan_schema)


@pytest.mark.usefixtures("checked")
def test_sampled_plans_at_a_high_temperature_all_satisfy_the_schema(model: Any, plan_schema: dict[str, Any]) -> None:
    """The retry ladder's repairs sample at a temperature above 0: a rejected token is resampled from the
    allowed ones, so no draw breaks the schema."""
    finished = [
        choice["message"]["content"]
        for seed, question in enumerate(QUESTIONS + QUESTIONS[:1])
        if (choice := _completion(model, plan_schema, question, 1.2, seed=seed))["finish_reason"] == "stop"
    ]
    assert len(finished) >= 2  # a draw may run out of tokens inside a long string: not the grammar's doing
    for text in finished:
        jsonschema.validate(json.loads(text), plan_schema)


@pytest.mark.usefixtures("checked")
def test_a_schema_llama_cpp_cannot_parse_is_an_error_not_a_crash(model: Any) -> None:
    """An empty enum becomes an empty grammar rule, which llama.cpp refuses: llama-cpp-python's own sampler
    chain would take the NULL and the server would die of a segfault; this is one request's error."""
    schema = {"type": "object", "properties": {"tool": {"type": "string", "enum": []}}, "required": ["tool"]}
    with pytest.raises(ValueError, match="could not parse the grammar"):
        model.create_chat_completion(
            [{"role": "user", "content": "Pick a tool."}],
            max_tokens=10,
            response_format={"type": "json_object", "schema": schema},
        )
    assert _ask(
        model, {"type": "object", "properties": {"tool": {"type": "string"}}, "required": ["tool"]}, "Pick a tool.", 0.0
    )  # the model still serves


def _use_token_logprobs(monkeypatch: pytest.MonkeyPatch) -> None:
    from embedded import token_logprobs

    for name in ("_init_sampler", "create_chat_completion"):
        monkeypatch.setattr(llama_cpp.Llama, name, getattr(llama_cpp.Llama, name))
    assert install() and token_logprobs.install()


def test_the_written_tokens_log_probabilities_are_the_ones_llama_cpp_python_gives_with_all_logits(
    model: Any, plan_schema: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recorded as each token is sampled, without keeping every prompt token's logits: the same numbers the
    stock server gives a model loaded with logits_all, and the same plan as without them."""
    from embedded.model_weights import resolve_model

    messages = [{"role": "user", "content": "Name three primary colours, comma separated."}]
    stock_model = llama_cpp.Llama(
        str(resolve_model().path), n_ctx=512, n_threads=os.cpu_count() or 2, logits_all=True, verbose=False
    )
    try:
        stock = stock_model.create_chat_completion(
            messages, temperature=0.0, max_tokens=20, logprobs=True, top_logprobs=1
        )
    finally:
        stock_model.close()
    plain = _ask(model, plan_schema, QUESTIONS[0], 0.0)
    _use_token_logprobs(monkeypatch)
    model.reset()
    ours = model.create_chat_completion(messages, temperature=0.0, max_tokens=20, logprobs=True)["choices"][0]
    want = [(t["token"], t["logprob"]) for t in stock["choices"][0]["logprobs"]["content"]]
    got = [(t["token"], t["logprob"]) for t in ours["logprobs"]["content"]]
    assert ours["message"]["content"] == stock["choices"][0]["message"]["content"]
    assert [t for t, _ in got] == [t for t, _ in want][: len(got)] and len(got) >= len(want) - 1
    assert all(abs(a - b) < 0.05 for (_, a), (_, b) in zip(got, want, strict=False))

    model.reset()
    planned = model.create_chat_completion(
        [{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTIONS[0]}],
        temperature=0.0,
        max_tokens=400,
        response_format={"type": "json_object", "schema": plan_schema},
        logprobs=True,
    )["choices"][0]
    assert planned["message"]["content"] == plain
    assert "".join(t["token"] for t in planned["logprobs"]["content"]) == plain
    assert all(t["logprob"] <= 0 for t in planned["logprobs"]["content"])
