"""Models share one small async protocol: messages + tool schemas in, one assistant turn out.

- `OpenAIModel`: the real client (`openai.AsyncOpenAI`) for any OpenAI-compatible server.
- `ScriptedModel`: a queue of turns, for scripted sessions, tests and demos.
- `FunctionModel`: a Python function decides each turn (offline agents such as the gold agent).
- `ReplayModel`: re-emits the model turns of a saved trajectory, so it can be re-judged by today's gate.
"""

from __future__ import annotations

import json
import os
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Iterable, Protocol

from ledger_tui.engine.errors import (
    EndpointUnreachableError,
    MissingApiKeyError,
    ModelError,
    ScriptExhaustedError,
    TransientModelError,
)
from ledger_tui.engine.events import AssistantMessage, Event, ToolCall

Message = dict[str, Any]


@dataclass(frozen=True)
class ModelTurn:
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # call id -> why its arguments could not be used (broken JSON, not an object); the loop
    # answers those calls with a tool error instead of running them.
    malformed: dict[str, str] = field(default_factory=dict)


class Model(Protocol):
    name: str

    async def complete(self, messages: list[Message], tools: list[dict[str, Any]]) -> ModelTurn: ...


def estimate_tokens(text: str) -> int:
    """A cheap, deterministic token estimate (about four characters a token)."""
    return (len(text) + 3) // 4


def parse_arguments(raw: str | None) -> tuple[dict[str, Any], str | None]:
    """Tool-call arguments as a JSON object, or ({}, reason) when the model sent something else."""
    if raw is None or not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return {}, f"the arguments are not valid JSON ({exc.msg} at character {exc.pos})"
    if not isinstance(value, dict):
        return {}, "the arguments must be a JSON object"
    return value, None


class ScriptedModel:
    """Returns prepared turns in order; asking past the end raises ScriptExhaustedError."""

    def __init__(self, turns: Iterable[ModelTurn] = (), name: str = "scripted") -> None:
        self.name = name
        self.queue: deque[ModelTurn] = deque(turns)
        self.calls = 0

    def extend(self, turns: Iterable[ModelTurn]) -> None:
        self.queue.extend(turns)

    async def complete(self, messages: list[Message], tools: list[dict[str, Any]]) -> ModelTurn:
        self.calls += 1
        if not self.queue:
            raise ScriptExhaustedError(
                "The script has no agent turn left for this point of the conversation; add an agent turn to the script."
            )
        turn = self.queue.popleft()
        if turn.prompt_tokens or turn.completion_tokens:
            return turn
        from ledger_tui.engine.prompt import message_tokens

        prompt = sum(message_tokens(m) for m in messages)
        completion = estimate_tokens(turn.text) + sum(
            estimate_tokens(json.dumps(c.arguments)) + 8 for c in turn.tool_calls
        )
        return ModelTurn(turn.text, turn.tool_calls, prompt, completion, dict(turn.malformed))


class FunctionModel:
    """Each turn is decided by `fn(messages, tools)` (sync or async)."""

    def __init__(
        self,
        fn: Callable[[list[Message], list[dict[str, Any]]], ModelTurn | Awaitable[ModelTurn]],
        name: str = "function",
    ) -> None:
        self.fn = fn
        self.name = name

    async def complete(self, messages: list[Message], tools: list[dict[str, Any]]) -> ModelTurn:
        result = self.fn(messages, tools)
        if hasattr(result, "__await__"):
            result = await result  # type: ignore[misc]
        return result  # type: ignore[return-value]


class ReplayModel:
    """Re-emits the assistant turns of a recorded trajectory, in order."""

    EXHAUSTED = "The recording has no model turn left here: the replay took another path than the recorded run."

    def __init__(self, events: Iterable[Event], name: str = "replay") -> None:
        turns = [
            ModelTurn(e.text, tuple(e.tool_calls))
            for e in events
            if isinstance(e, AssistantMessage)
            and e.author == "model"
            and all(c.requestor == "assistant" for c in e.tool_calls)
        ]
        self.inner = ScriptedModel(turns, name=name)
        self.name = name

    async def complete(self, messages: list[Message], tools: list[dict[str, Any]]) -> ModelTurn:
        if not self.inner.queue:
            raise ScriptExhaustedError(self.EXHAUSTED)
        return await self.inner.complete(messages, tools)


class RetryingModel:
    """Retries transient failures with exponential backoff; other errors pass straight through."""

    def __init__(self, inner: Model, attempts: int = 4, base_delay: float = 0.5, max_delay: float = 8.0) -> None:
        self.inner = inner
        self.name = inner.name
        self.attempts = attempts
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.retries = 0

    async def aclose(self) -> None:
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()

    async def complete(self, messages: list[Message], tools: list[dict[str, Any]]) -> ModelTurn:
        import asyncio

        for attempt in range(self.attempts):
            try:
                return await self.inner.complete(messages, tools)
            except TransientModelError:
                if attempt == self.attempts - 1:
                    raise
                self.retries += 1
                await asyncio.sleep(min(self.max_delay, self.base_delay * (2**attempt)))
        raise AssertionError("unreachable")


class _Endpoint:
    """The `AsyncOpenAI` clients of one endpoint on one event loop, shared by every model that
    calls it, so concurrent sessions reuse connections.

    A client's connection pool looks at each of its connections on every request, so a single pool
    for 64 sessions costs more CPU per call than the call's own work. Clients therefore take at most
    `PER_CLIENT` requests at once, and a request goes to a client with an idle connection if there
    is one (a pool opens a connection only when all of its connections are busy, so a client whose
    requests in flight are below its peak has one idle). All clients reuse one TLS context, which
    otherwise costs ~15 ms of certificate loading per client."""

    PER_CLIENT = 8

    def __init__(self, key: str, base_url: str | None, timeout: float, max_retries: int) -> None:
        self._options = dict(api_key=key, base_url=base_url, timeout=timeout, max_retries=max_retries)
        self.clients: list[list[Any]] = []  # [client, requests in flight, most ever in flight]
        self.users = 0

    def lease(self) -> list[Any]:
        """The client for the next request; the caller counts the request in and out of entry[1]."""
        idle = [e for e in self.clients if e[1] < e[2]]
        if idle:
            return max(idle, key=lambda e: e[1])
        room = [e for e in self.clients if e[1] < self.PER_CLIENT]
        if room:
            entry = max(room, key=lambda e: e[1])
        else:
            import openai

            http = openai.DefaultAsyncHttpxClient(verify=_tls_context())
            entry = [openai.AsyncOpenAI(**self._options, http_client=http), 0, 0]
            self.clients.append(entry)
        entry[2] += 1
        return entry

    async def close(self) -> None:
        clients, self.clients = self.clients, []
        for entry in clients:
            await entry[0].close()


_ENDPOINTS: dict[tuple[Any, ...], _Endpoint] = {}
_TLS: list[Any] = []


def _tls_context() -> Any:
    """One TLS context for every client, made as the SDK's HTTP library makes its default one
    (`httpx2` for openai 3, `httpx` before); True, each client making its own, if it cannot say."""
    if not _TLS:
        try:
            import httpx2 as http_library
        except ImportError:
            import httpx as http_library  # type: ignore[no-redef]
        make = getattr(http_library, "create_ssl_context", None)
        try:
            _TLS.append(make() if make is not None else True)
        except TypeError:  # an older signature
            _TLS.append(True)
    return _TLS[0]


class OpenAIModel:
    """Any OpenAI-compatible chat-completions server (OpenAI, vLLM, llama.cpp, Ollama, …)."""

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float | None = 0.0,
        timeout: float = 60.0,
        max_retries: int = 2,
    ) -> None:

        self.model = model or os.environ.get("OPENAI_MODEL") or "gpt-4o-mini"
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if not self.base_url:
                raise MissingApiKeyError()
            key = "not-needed"  # local servers usually ignore the key
        self.name = self.model
        self.temperature = temperature
        self._config = (key, self.base_url, timeout, max_retries)
        self._endpoint: _Endpoint | None = None
        self._key: tuple[Any, ...] | None = None

    def _join(self) -> _Endpoint:
        """This loop's shared clients for the endpoint (building a client costs ~15 ms of TLS
        set-up, and concurrent sessions should share connections)."""
        if self._endpoint is None:
            import asyncio

            self._key = (id(asyncio.get_running_loop()), *self._config)
            endpoint = _ENDPOINTS.get(self._key)
            if endpoint is None:
                endpoint = _ENDPOINTS[self._key] = _Endpoint(*self._config)
            endpoint.users += 1
            self._endpoint = endpoint
        return self._endpoint

    async def aclose(self) -> None:
        """Leave the shared clients; the last model of an endpoint closes its connections."""
        endpoint, self._endpoint = self._endpoint, None
        if endpoint is None:
            return
        endpoint.users -= 1
        if endpoint.users <= 0:
            if _ENDPOINTS.get(self._key) is endpoint:
                del _ENDPOINTS[self._key]
            await endpoint.close()

    async def complete(self, messages: list[Message], tools: list[dict[str, Any]]) -> ModelTurn:
        import openai

        request: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools:
            request["tools"] = tools
        if self.temperature is not None:
            request["temperature"] = self.temperature
        # Our messages are already plain JSON, so they go out as they are and the reply is read as
        # bytes: `chat.completions.create` would walk every message through its TypedDict
        # transformer and build a typed reply, milliseconds per call on long transcripts with many
        # sessions in flight.
        where = self.base_url or "api.openai.com"
        lease = self._join().lease()
        lease[1] += 1
        try:
            raw = await lease[0].post("/chat/completions", body=request, cast_to=bytes)
        except openai.AuthenticationError:
            raise ModelError(f"The endpoint at {where} rejected the API key; set a valid OPENAI_API_KEY.") from None
        except openai.NotFoundError:
            raise ModelError(f"The endpoint at {where} does not know model {self.model!r}; pick another with --model.") from None
        except openai.APITimeoutError:
            raise EndpointUnreachableError(where, "timed out") from None
        except openai.APIConnectionError as exc:
            raise EndpointUnreachableError(where, type(exc.__cause__ or exc).__name__) from None
        except openai.APIStatusError as exc:
            kind = TransientModelError if exc.status_code in (408, 409, 429) or exc.status_code >= 500 else ModelError
            raise kind(f"The endpoint at {where} answered HTTP {exc.status_code}; try again or check the server.") from None
        except openai.OpenAIError as exc:
            raise ModelError(f"The model call failed ({type(exc).__name__}); check --base-url and --model.") from None
        finally:
            lease[1] -= 1
        return read_completion(raw, where)


def read_completion(raw: bytes, where: str) -> ModelTurn:
    """One assistant turn from a chat-completions reply body; a reply of another shape is a
    ModelError naming the endpoint, and a tool call with unusable arguments is marked malformed."""
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise ModelError(f"The endpoint at {where} did not answer with JSON; check that it serves chat completions.") from None
    choices = data.get("choices") if isinstance(data, dict) else None
    message = choices[0].get("message") if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
    if not isinstance(message, dict):
        raise ModelError(f"The endpoint at {where} returned no choices; check that it serves chat completions.")
    calls: list[ToolCall] = []
    malformed: dict[str, str] = {}
    for i, tc in enumerate(message.get("tool_calls") or []):
        fn = tc.get("function") if isinstance(tc, dict) else None
        if not isinstance(fn, dict):
            continue
        call_id = str(tc.get("id") or f"call_{i}")
        arguments = fn.get("arguments")
        if isinstance(arguments, dict):  # some servers send an object instead of a JSON string
            args, problem = arguments, None
        else:
            args, problem = parse_arguments(arguments if isinstance(arguments, str) else None)
        if problem:
            malformed[call_id] = problem
        calls.append(ToolCall(id=call_id, name=str(fn.get("name") or ""), arguments=args))
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    content = message.get("content")
    return ModelTurn(
        text=content if isinstance(content, str) else "",
        tool_calls=tuple(calls),
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=_count(usage.get("completion_tokens")),
        malformed=malformed,
    )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and value >= 0 else 0
