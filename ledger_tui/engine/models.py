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


_SHARED: dict[tuple[Any, ...], list[Any]] = {}


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
        import openai

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
        self._client: Any = None
        self._key: tuple[Any, ...] | None = None

    def _acquire(self) -> Any:
        """One `AsyncOpenAI` client (and connection pool) per event loop and endpoint, shared by
        every model of that endpoint: building a client costs ~15 ms of TLS set-up, and many
        concurrent sessions should share connections."""
        if self._client is None:
            import asyncio

            import openai

            key, base_url, timeout, max_retries = self._config
            self._key = (id(asyncio.get_running_loop()), *self._config)
            entry = _SHARED.get(self._key)
            if entry is None:
                client = openai.AsyncOpenAI(api_key=key, base_url=base_url, timeout=timeout, max_retries=max_retries)
                entry = _SHARED[self._key] = [client, 0]
            entry[1] += 1
            self._client = entry[0]
        return self._client

    async def aclose(self) -> None:
        """Release the shared client; the last model of an endpoint closes its connection pool."""
        if self._client is None or self._key is None:
            return
        entry = _SHARED.get(self._key)
        self._client = None
        if entry is not None:
            entry[1] -= 1
            if entry[1] <= 0:
                del _SHARED[self._key]
                await entry[0].close()

    async def complete(self, messages: list[Message], tools: list[dict[str, Any]]) -> ModelTurn:
        import openai

        from openai.types.chat import ChatCompletion

        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools:
            body["tools"] = tools
        if self.temperature is not None:
            body["temperature"] = self.temperature
        where = self.base_url or "api.openai.com"
        client = self._acquire()
        try:
            # The plain `post` sends our already-JSON-shaped body as it is; `chat.completions.create`
            # would first walk every message and schema through its TypedDict transformer, which
            # costs milliseconds per call on long transcripts.
            response = await client.post("/chat/completions", body=body, cast_to=ChatCompletion)
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
        if not getattr(response, "choices", None):
            raise ModelError(f"The endpoint at {where} returned no choices; check that it serves chat completions.")
        message = response.choices[0].message
        calls: list[ToolCall] = []
        malformed: dict[str, str] = {}
        for i, tc in enumerate(message.tool_calls or []):
            fn = getattr(tc, "function", None)
            if fn is None:
                continue
            call_id = tc.id or f"call_{i}"
            args, problem = parse_arguments(fn.arguments)
            if problem:
                malformed[call_id] = problem
            calls.append(ToolCall(id=call_id, name=fn.name or "", arguments=args))
        usage = response.usage
        return ModelTurn(
            text=message.content or "",
            tool_calls=tuple(calls),
            prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
            completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
            malformed=malformed,
        )
