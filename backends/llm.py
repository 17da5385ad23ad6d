"""The one OpenAI-compatible chat client every activity shares.

Errors are classified for Temporal: transport failures, timeouts, 429 and 5xx are retryable
(Temporal's RetryPolicy backs off); other 4xx (auth, invalid request, unknown model) are
non-retryable, so a misconfiguration fails fast with a clear message instead of retrying for minutes.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import httpx
from temporalio.exceptions import ApplicationError

from contracts.llm_usage import LlmUsage
from contracts.payload_limits import COMPLETION_BYTES, trimmed_to_bytes
from contracts.redaction import shown_url

JsonMode = Literal["json_object_schema", "json_schema"]


TokenLogprobs = tuple[tuple[str, float], ...]  # each written token's text and log-probability, in order
TextSink = Callable[[str], Awaitable[None]]  # told each piece of a streamed completion as it arrives


@dataclass(frozen=True)
class Completion:
    text: str
    model: str
    in_tokens: int | None
    out_tokens: int | None
    # Only when asked for (`logprobs=True`) and the server gave them, all of them well-formed; else None.
    token_logprobs: TokenLogprobs | None = None


@dataclass
class UsageMeter:
    """The completions of one activity (worker/llm_usage.py opens one per activity), each counted once however
    many layers (LLMClient, MeteredChatModel) hand it on."""

    _counted: list[Completion] = field(default_factory=list)  # kept, so an id() is never reused meanwhile

    def add(self, completion: Completion) -> None:
        if not any(c is completion for c in self._counted):
            self._counted.append(completion)

    def usage(self) -> LlmUsage:
        total = LlmUsage()
        for c in self._counted:
            total = total.plus(
                LlmUsage(
                    calls=1, in_tokens=_count(c.in_tokens) or 0, out_tokens=_count(c.out_tokens) or 0, model=c.model
                )
            )
        return total


_meter: ContextVar[UsageMeter | None] = ContextVar("llm_usage_meter", default=None)


@contextmanager
def metering() -> Iterator[UsageMeter]:
    """Count the LLM calls made in this context (an activity, and the tasks it starts) into a fresh meter."""
    meter = UsageMeter()
    token = _meter.set(meter)
    try:
        yield meter
    finally:
        _meter.reset(token)


def counted(completion: Completion) -> Completion:
    """Add `completion` to the current activity's meter, if one is open."""
    meter = _meter.get()
    if meter is not None:
        meter.add(completion)
    return completion


class ChatModel(Protocol):
    """What activities need of an LLM: LLMClient (OpenAI-compatible) or TrustGraphLLM (text-completion)."""

    base_url: str
    logprobs: bool  # whether `chat(logprobs=True)` asks the server for them (TrustGraph's service has none)

    async def chat(
        self,
        messages: list[dict[str, str]],
        *,
        json_schema: dict[str, Any] | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
        logprobs: bool = False,
    ) -> Completion: ...

    async def aclose(self) -> None: ...


class LLMClient:
    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str = "",
        timeout_s: float = 120.0,
        json_mode: JsonMode = "json_object_schema",
        logprobs: bool = True,
    ) -> None:
        """`logprobs`: False never asks the server for log-probabilities (for one that rejects the field)."""
        self.base_url = base_url.rstrip("/")
        self.shown_url = shown_url(self.base_url)  # for messages: no key in the URL reaches a history or log
        self.model = model
        self.json_mode = json_mode
        self.logprobs = logprobs
        self.streams = True  # chat_stream sends the text as the server writes it
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        # Temporal owns retries; the HTTP client makes exactly one attempt per call.
        self._http = httpx.AsyncClient(
            base_url=self.base_url, headers=headers, timeout=httpx.Timeout(timeout_s, connect=5.0)
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def answers(self) -> None:
        """Returns when the server answers GET /models with this client's key: the cheapest request an
        OpenAI-compatible server serves (and `tg-confidence up` asks of an external one). Raises with why not:
        no answer, or HTTP 4xx/5xx (a refused key, llama.cpp's 503 while it loads the model)."""
        try:
            response = await self._http.get("/models")
        except httpx.HTTPError as exc:
            raise RuntimeError(f"{self.shown_url} is unreachable: {type(exc).__name__}: {exc}") from exc
        if response.status_code >= 400:
            raise RuntimeError(
                f"{self.shown_url} answered HTTP {response.status_code} to GET /models: {response.text[:200]}"
            )

    def _response_format(self, schema: dict[str, Any]) -> dict[str, Any]:
        if self.json_mode == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": "output", "schema": schema, "strict": True}}
        return {"type": "json_object", "schema": schema}

    async def chat(
        self,
        messages: list[dict[str, str]],
        *,
        json_schema: dict[str, Any] | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
        logprobs: bool = False,
    ) -> Completion:
        """`logprobs`: ask for the written tokens' log-probabilities (OpenAI's `logprobs: true`; llama.cpp,
        vLLM and the embedded server give them). A server that ignores it gives a completion without them."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": temperature,
        }
        if logprobs and self.logprobs:
            body["logprobs"] = True
        if json_schema is not None:
            body["response_format"] = self._response_format(json_schema)
        with self._transport_errors():
            response = await self._http.post("/chat/completions", json=body)
        return counted(self._parse(response))

    async def chat_stream(
        self,
        messages: list[dict[str, str]],
        *,
        on_text: TextSink,
        max_tokens: int = 512,
        temperature: float = 0.0,
        logprobs: bool = False,
    ) -> Completion:
        """`chat` with OpenAI's `stream: true`: `on_text` is awaited with each piece of text as the server sends
        it, and the whole completion is returned at the end. A stream that ends without a finish reason (the
        server died, or sent `[DONE]` early) is a retryable failure: the answer was cut off."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": temperature,
            "stream": True,
            "stream_options": {"include_usage": True},
        }  # the usage, in a last chunk
        if logprobs and self.logprobs:
            body["logprobs"] = True
        with self._transport_errors():
            async with self._http.stream("POST", "/chat/completions", json=body) as response:
                if response.status_code >= 400 or not _is_event_stream(response):
                    # An error, or a server that ignores `stream` and answers with one whole completion.
                    await response.aread()
                    completion = self._parse(response)
                    await on_text(completion.text)
                    return counted(completion)
                reader = _StreamReader(self.model)
                async for line in response.aiter_lines():
                    piece = reader.line(line, self.shown_url)
                    if piece:
                        await on_text(piece)
                    if reader.done or reader.full:
                        break
        return counted(reader.completion(self.shown_url))

    @contextmanager
    def _transport_errors(self) -> Iterator[None]:
        """The HTTP client's timeouts and transport failures as the retryable errors activities raise."""
        try:
            yield
        except httpx.TimeoutException as exc:
            raise ApplicationError(
                f"LLM at {self.shown_url} timed out: {type(exc).__name__}", type="LLMTimeout"
            ) from exc
        except httpx.TransportError as exc:
            raise ApplicationError(f"LLM at {self.shown_url} is unreachable: {exc}", type="LLMUnavailable") from exc

    def _parse(self, response: httpx.Response) -> Completion:
        status = response.status_code
        if status == 429 or status >= 500:
            raise ApplicationError(
                f"LLM at {self.shown_url} answered HTTP {status}: {response.text[:300]}",
                type="LLMServerError",
            )
        if status >= 400:
            kind = "LLMAuthError" if status in (401, 403) else "LLMRequestRejected"
            raise ApplicationError(
                f"LLM at {self.shown_url} rejected the request with HTTP {status}: {response.text[:300]}",
                type=kind,
                non_retryable=True,
            )
        try:
            data = response.json()
            choice = data["choices"][0]
            text = choice["message"]["content"] or ""
        except (json.JSONDecodeError, KeyError, IndexError, TypeError) as exc:
            # A 200 without a completion is a server fault; another attempt may well succeed.
            raise ApplicationError(
                f"LLM at {self.shown_url} sent a malformed completion: {response.text[:300]}",
                type="LLMBadResponse",
            ) from exc
        usage = data.get("usage") or {}
        return Completion(
            text=trimmed_to_bytes(text, COMPLETION_BYTES)[0],  # a server may ignore max_tokens
            model=data.get("model") or self.model,
            in_tokens=usage.get("prompt_tokens"),
            out_tokens=usage.get("completion_tokens"),
            token_logprobs=token_logprobs(choice.get("logprobs"), text),
        )


def token_logprobs(given: object, text: str) -> TokenLogprobs | None:
    """OpenAI's `choices[0].logprobs.content` as (token, logprob) pairs, or None unless every entry is a
    token and a finite non-positive number and the tokens spell the text: a server's odd answer is no
    evidence, never an error."""
    content = given.get("content") if isinstance(given, dict) else None
    if not isinstance(content, list) or not content:
        return None
    pairs = []
    for entry in content:
        token = entry.get("token") if isinstance(entry, dict) else None
        logprob = entry.get("logprob") if isinstance(entry, dict) else None
        if (
            not isinstance(token, str)
            or isinstance(logprob, bool)
            or not isinstance(logprob, (int, float))
            or not math.isfinite(logprob)
            or logprob > 0
        ):
            return None
        pairs.append((token, float(logprob)))
    return tuple(pairs) if "".join(t for t, _ in pairs) == text else None


def _is_event_stream(response: httpx.Response) -> bool:
    return response.headers.get("content-type", "").split(";")[0].strip() == "text/event-stream"


class _StreamReader:
    """OpenAI's streamed chat completion (server-sent events `data: {chunk}`, then `data: [DONE]`) read line by
    line: the text pieces, the token log-probabilities given along the way, the usage of the last chunk."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.text = ""
        self.logprobs: list[Any] = []
        self.usage: dict[str, Any] = {}
        self.finished = False  # a chunk gave a finish_reason
        self.done = False  # `data: [DONE]`
        self.full = False  # more text than a completion may hold (a server that ignores max_tokens)

    def line(self, line: str, base_url: str) -> str:
        """The text piece this line carries ("" for none)."""
        if not line.startswith("data:"):
            return ""  # blank separators, comments, `event:` lines
        data = line[len("data:") :].strip()
        if data == "[DONE]":
            self.done = True
            return ""
        try:
            chunk = json.loads(data)
            choices = chunk.get("choices") or []
            choice = choices[0] if choices else {}
            piece = (choice.get("delta") or {}).get("content") or ""
            if not isinstance(piece, str):
                raise TypeError("content is no text")
        except (json.JSONDecodeError, AttributeError, TypeError) as exc:
            raise ApplicationError(
                f"LLM at {base_url} sent a malformed stream chunk: {data[:300]}", type="LLMBadResponse"
            ) from exc
        self.model = chunk.get("model") or self.model
        self.usage = chunk.get("usage") or self.usage
        self.finished = self.finished or bool(choice.get("finish_reason"))
        given = (choice.get("logprobs") or {}).get("content") if isinstance(choice.get("logprobs"), dict) else None
        if isinstance(given, list):
            self.logprobs.extend(given)
        kept, size = trimmed_to_bytes(self.text + piece, COMPLETION_BYTES)
        piece = kept[len(self.text) :] if kept.startswith(self.text) else ""
        self.text, self.full = kept, size > COMPLETION_BYTES
        return piece

    def completion(self, base_url: str) -> Completion:
        # No finish reason: the server stopped mid-answer (died, or llama-cpp-python's interrupt_requests sent
        # [DONE] early for another request); the text is not the whole completion.
        if not (self.finished or self.full):
            raise ApplicationError(
                f"LLM at {base_url} ended its stream before the completion was done", type="LLMBadResponse"
            )
        return Completion(
            text=self.text,
            model=self.model,
            in_tokens=self.usage.get("prompt_tokens"),
            out_tokens=self.usage.get("completion_tokens"),
            token_logprobs=token_logprobs({"content": self.logprobs}, self.text),
        )


async def streamed(
    model: ChatModel,
    messages: list[dict[str, str]],
    on_text: TextSink,
    *,
    max_tokens: int = 512,
    temperature: float = 0.0,
    logprobs: bool = False,
) -> Completion:
    """A completion streamed from `model` (`on_text` told each piece), or, from a model that cannot stream
    (TrustGraph's text-completion), written whole and told as one piece."""
    stream = getattr(model, "chat_stream", None)
    if stream is None:
        completion = await model.chat(messages, max_tokens=max_tokens, temperature=temperature, logprobs=logprobs)
        await on_text(completion.text)
        return completion
    completion = await stream(
        messages, on_text=on_text, max_tokens=max_tokens, temperature=temperature, logprobs=logprobs
    )
    return completion


class LlmObserver(Protocol):
    """Told of every LLM call as it ends (service/agent_metrics.py AgentMetrics)."""

    def llm_call(self, seconds: float, model: str, in_tokens: int | None, out_tokens: int | None) -> None: ...


def _count(tokens: object) -> int | None:
    """A token count as the server reported it, or None when it is missing or nonsense."""
    return tokens if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens >= 0 else None


class MeteredChatModel:
    """A ChatModel that tells `observer` how long each call took and, when `meter_tokens`, how many tokens
    it used. Failed calls are timed too. The model label is the configured name, never the server's: a
    server's answer must not be able to mint new metric series."""

    def __init__(self, inner: ChatModel, observer: LlmObserver, model: str, meter_tokens: bool) -> None:
        self.inner = inner
        self.base_url = inner.base_url
        self.logprobs: bool = getattr(inner, "logprobs", False)  # whether it asks for them (LLMClient)
        self.streams: bool = getattr(inner, "streams", False)  # whether chat_stream streams (else: one piece)
        self._observer = observer
        self._model = model
        self._meter_tokens = meter_tokens

    async def chat(
        self,
        messages: list[dict[str, str]],
        *,
        json_schema: dict[str, Any] | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
        logprobs: bool = False,
    ) -> Completion:
        return await self._observed(
            self.inner.chat(
                messages, json_schema=json_schema, max_tokens=max_tokens, temperature=temperature, logprobs=logprobs
            )
        )

    async def chat_stream(
        self,
        messages: list[dict[str, str]],
        *,
        on_text: TextSink,
        max_tokens: int = 512,
        temperature: float = 0.0,
        logprobs: bool = False,
    ) -> Completion:
        return await self._observed(
            streamed(self.inner, messages, on_text, max_tokens=max_tokens, temperature=temperature, logprobs=logprobs)
        )

    async def _observed(self, call: Awaitable[Completion]) -> Completion:
        """The call's completion, counted here too (for a model that does not count itself: TrustGraph's
        text-completion), with its time and, when metered, its tokens told to the observer, failures included."""
        started = time.monotonic()
        completion: Completion | None = None
        try:
            completion = await call
            return counted(completion)
        finally:
            in_tokens: int | None = None
            out_tokens: int | None = None
            if self._meter_tokens and completion is not None:
                in_tokens, out_tokens = _count(completion.in_tokens), _count(completion.out_tokens)
            self._observer.llm_call(time.monotonic() - started, self._model, in_tokens, out_tokens)

    async def aclose(self) -> None:
        await self.inner.aclose()
