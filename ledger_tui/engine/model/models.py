"""Models share one small async protocol: messages + tool schemas in, one assistant turn out.

- `OpenAIModel`: the real client (`openai.AsyncOpenAI`) for any OpenAI-compatible server.
- `ScriptedModel`: a queue of turns, for scripted sessions, tests and demos.
- `FunctionModel`: a Python function decides each turn (offline agents such as the gold agent).
- `ReplayModel`: re-emits the model turns of a saved trajectory, so it can be re-judged by today's gate.

`OpenAIModel` holds what one call does (the request, the reply read into a `ModelTurn`, the
server's errors as sentences); the clients and connections it shares with every other model of
the endpoint are `endpoint.py`'s, the bytes on the wire `transport.py`'s.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Iterable, Protocol

from ledger_tui.engine import limits
from ledger_tui.engine.errors import (
    ConnectionDroppedError,
    ContextWindowExceededError,
    EndpointUnreachableError,
    MissingApiKeyError,
    ModelError,
    ModelTimeoutError,
    NotAChatCompletionError,
    ScriptExhaustedError,
    TransientModelError,
)
from ledger_tui.engine.events import AssistantMessage, Event, ToolCall
from ledger_tui.engine.store.reading import MAX_DEPTH, too_deep
from ledger_tui.engine.model.endpoint import Endpoint, join
from ledger_tui.engine.model.tokens import Message, estimate_tokens, message_tokens


@dataclass(frozen=True)
class ModelTurn:
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # call id -> why its arguments could not be used (broken JSON, not an object); the loop
    # answers those calls with a tool error instead of running them.
    malformed: dict[str, str] = field(default_factory=dict)
    # why the server stopped ("stop", "tool_calls", "length" when cut at the completion cap, …)
    finish_reason: str | None = None
    # prompt tokens the server took from its prefix cache, where it reports them
    cached_tokens: int | None = None


class Model(Protocol):
    name: str

    async def complete(self, messages: list[Message], tools: list[dict[str, Any]]) -> ModelTurn: ...


def parse_arguments(raw: str | None) -> tuple[dict[str, Any], str | None]:
    """Tool-call arguments as a JSON object, or ({}, reason) when the model sent something else."""
    if raw is None or not raw.strip():
        return {}, None
    if len(raw) > limits.MAX_ARGUMENTS:  # (before it is parsed: the cap bounds that work too)
        return {}, limits.too_long_arguments(len(raw))
    if too_deep(raw) is not None:  # a trajectory could not hold them (nor Python's parser read them)
        return {}, f"the arguments are nested more than {MAX_DEPTH} levels deep"
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
        prompt = sum(message_tokens(m) for m in messages)
        completion = estimate_tokens(turn.text) + sum(
            estimate_tokens(json.dumps(c.arguments)) + 8 for c in turn.tool_calls
        )
        return ModelTurn(turn.text, turn.tool_calls, prompt, completion, dict(turn.malformed), turn.finish_reason, turn.cached_tokens)


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


class NoModel:
    """Stands in for a model in `--no-model` play (and a fork opened from replay): the operator
    acts as the agent with /call."""

    name = "no model"

    async def complete(self, messages: list[Message], tools: list[dict[str, Any]]) -> ModelTurn:
        raise ModelError("No model is connected; act as the agent with /call NAME key=value.")


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


@dataclass(frozen=True)
class ClientOptions:
    """How requests go to a real server (flags `--timeout`, `--retries`, `--max-tokens`,
    `--temperature`, `--extra-body`).

    - `timeout`: seconds one call may take; the SDK's own retries are off, so nothing is resent
      silently: `retries` more attempts are made by `RetryingModel`, on transient failures only.
    - `max_tokens`: the completion cap (None: none sent), sent as `max_completion_tokens` to
      OpenAI's API and as `max_tokens` to other servers (llama.cpp, vLLM, Ollama).
    - `temperature`: sent only when set (some models refuse it).
    - `extra_body`: server-specific fields merged into every request (`{"top_k": 20}`)."""

    timeout: float = 120.0
    retries: int = 2
    max_tokens: int | None = 2048
    temperature: float | None = None
    extra_body: dict[str, Any] = field(default_factory=dict)


def parse_extra_body(text: str | None) -> dict[str, Any]:
    """`--extra-body` as a JSON object, or one sentence saying what is wrong."""
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ModelError(f"--extra-body is not valid JSON ({exc.msg}); pass an object such as '{{\"top_k\": 20}}'.") from None
    if not isinstance(value, dict):
        raise ModelError("--extra-body must be a JSON object such as '{\"top_k\": 20}'.")
    return value


def unwrap(model: Any) -> Any:
    """The innermost model under retry and watch wrappers (which hold it as `.inner`)."""
    while hasattr(model, "inner"):
        model = model.inner
    return model


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


class OpenAIModel:
    """Any OpenAI-compatible chat-completions server (OpenAI, vLLM, llama.cpp, Ollama, …)."""

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        options: ClientOptions | None = None,
    ) -> None:

        self.model = model or os.environ.get("OPENAI_MODEL") or "gpt-4o-mini"
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if not self.base_url:
                raise MissingApiKeyError()
            key = "not-needed"  # local servers usually ignore the key
        self.name = self.model
        self.options = options or ClientOptions()
        # the SDK never retries: RetryingModel owns the one retry budget
        self._config = (key, self.base_url, self.options.timeout, 0)
        self._endpoint: Endpoint | None = None

    def _join(self) -> Endpoint:
        """This loop's shared clients for the endpoint (building a client costs ~15 ms of TLS
        set-up, and concurrent sessions should share connections)."""
        if self._endpoint is None:
            self._endpoint = join(self._config)
        return self._endpoint

    async def aclose(self) -> None:
        """Leave the shared clients; the last model of an endpoint closes its connections."""
        endpoint, self._endpoint = self._endpoint, None
        if endpoint is not None:
            await endpoint.leave()

    async def complete(self, messages: list[Message], tools: list[dict[str, Any]]) -> ModelTurn:
        import openai

        request = self.request(messages, tools)
        # Our messages are already plain JSON, so they go out as they are (encoded with the prompt's
        # prefix encoded once, body.py) and the reply is read as bytes: `chat.completions.create`
        # would walk every message through its TypedDict transformer and build a typed reply,
        # milliseconds per call on long transcripts with many sessions in flight.
        where = self.base_url or "api.openai.com"
        endpoint = self._join()
        lease = endpoint.lease()
        given = endpoint.body(lease[0], request)
        direct = endpoint.direct(lease[0], given)
        lease[1] += 1
        try:
            # the call's deadline as a timer on this task (wait_for would run the call as a task of its own)
            async with asyncio.timeout(_deadline(self.options.timeout)):
                if direct is not None:  # the bytes the SDK would send, without its request path
                    raw = await direct(given["content"])
                else:
                    raw = await lease[0].post("/chat/completions", **given, cast_to=bytes)
        except TimeoutError:  # the whole call's deadline: a reply trickling in slower than --timeout
            raise ModelTimeoutError(where, self.options.timeout, started=True) from None
        except openai.AuthenticationError:
            raise ModelError(f"The endpoint at {where} rejected the API key; set a valid OPENAI_API_KEY.") from None
        except openai.NotFoundError as exc:
            # an unknown model (OpenAI, vLLM) or a wrong path (llama-server: "File Not Found")
            said = server_words(exc)
            raise ModelError(
                f"The endpoint at {where} answered HTTP 404{': ' + said if said else ''}; check --base-url "
                f"(it usually ends in /v1) and --model ({self.model!r})."
            ) from None
        except openai.APITimeoutError:
            raise ModelTimeoutError(where, self.options.timeout) from None
        except openai.APIConnectionError as exc:
            cause = type(exc.__cause__ or exc).__name__
            if cause in _DROPPED:
                raise ConnectionDroppedError(where, cause) from None
            raise EndpointUnreachableError(where, cause) from None
        except openai.APIStatusError as exc:
            raise status_error(where, exc.status_code, server_words(exc)) from None
        except openai.OpenAIError as exc:
            raise ModelError(f"The model call failed ({type(exc).__name__}); check --base-url and --model.") from None
        finally:
            lease[1] -= 1
        return read_completion(raw, where)


    # ------------------------------------------------------------------ what the server says of itself
    def _root(self) -> str | None:
        """The server's address without the `/v1` the chat API sits under (llama.cpp serves `/props`
        and `/tokenize` there); None for OpenAI's API, which has neither."""
        if not self.base_url:
            return None
        root = self.base_url.rstrip("/")
        return root[: -len("/v1")] if root.endswith("/v1") else root

    async def _probe(self, method: str, url: str, body: dict[str, Any] | None = None) -> Any:
        """A short side request to the server (JSON in and out), or None if it has no such route."""
        import openai

        lease = self._join().lease()
        lease[1] += 1
        seconds = min(10.0, self.options.timeout)
        try:
            client = lease[0].with_options(timeout=seconds, max_retries=0)
            if method == "GET":
                call = client.get(url, cast_to=bytes)
            else:
                call = client.post(url, body=body or {}, cast_to=bytes)
            raw = await asyncio.wait_for(call, _deadline(seconds))
            return None if too_deep(raw.decode("utf-8", "replace")) is not None else json.loads(raw)
        except (openai.OpenAIError, ValueError, UnicodeDecodeError, RecursionError, TimeoutError):
            return None
        except RuntimeError:  # the client was closed under the request (the run is ending)
            return None
        finally:
            lease[1] -= 1

    async def context_window(self) -> tuple[int, str] | None:
        """The context window the server runs with, and where that was read: llama.cpp's `/props`
        (`n_ctx`), else vLLM's `/v1/models` (`max_model_len`); None when it does not say. Asked
        once per endpoint and model: every session and customer simulator of an eval shares it."""
        endpoint = self._join()
        if self.model not in endpoint.windows:
            # sessions that start together wait for one question, not one each (256 sessions
            # asked 512 times, each as long as the server takes)
            asking = endpoint.asking.get(self.model)
            if asking is None:
                asking = endpoint.asking[self.model] = asyncio.ensure_future(self._ask_window())
                # its outcome is taken even when every session waiting for it was cancelled (Ctrl-C)
                # and it then fails: asyncio would print a traceback for an error nobody took
                asking.add_done_callback(_taken)
            found = await asyncio.shield(asking)
            endpoint.windows.setdefault(self.model, found)
            endpoint.asking.pop(self.model, None)
        return endpoint.windows[self.model]

    async def _ask_window(self) -> tuple[int, str] | None:
        root = self._root()
        if root is None:
            return None
        props = await self._probe("GET", f"{root}/props")
        if isinstance(props, dict):
            settings = props.get("default_generation_settings")
            n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
            n_ctx = n_ctx or props.get("n_ctx")
            if isinstance(n_ctx, int) and n_ctx > 0:
                return n_ctx, "llama.cpp /props"
        models = await self._probe("GET", f"{self.base_url.rstrip('/')}/models")  # type: ignore[union-attr]
        for entry in (models.get("data") if isinstance(models, dict) else None) or []:
            if isinstance(entry, dict) and entry.get("id") == self.model and isinstance(entry.get("max_model_len"), int):
                return entry["max_model_len"], "vLLM /v1/models"
        return None

    async def count_tokens(self, text: str) -> int | None:
        """Tokens of `text` by the server's own tokenizer (llama.cpp and vLLM `/tokenize`), or None."""
        root = self._root()
        endpoint = self._join()
        if root is None or endpoint.tokenize is False:
            return None
        # llama.cpp takes {"content"}, vLLM {"model", "prompt"}; the endpoint remembers which worked
        forms = {"content": {"content": text}, "prompt": {"model": self.model, "prompt": text}}
        for kind in [endpoint.tokenize] if endpoint.tokenize else list(forms):
            reply = await self._probe("POST", f"{root}/tokenize", forms[kind])
            count = reply.get("count") if isinstance(reply, dict) else None
            if not isinstance(count, int) and isinstance(reply, dict) and isinstance(reply.get("tokens"), list):
                count = len(reply["tokens"])
            if isinstance(count, int):
                endpoint.tokenize = kind
                return count
        endpoint.tokenize = False
        return None

    def request(self, messages: list[Message], tools: list[dict[str, Any]]) -> dict[str, Any]:
        """The request body: what every server family accepts, plus the options set."""
        request: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools:
            request["tools"] = tools
            # llama.cpp-based servers leave the tools out of the prompt unless asked for them
            request["tool_choice"] = "auto"
        if self.options.temperature is not None:
            request["temperature"] = self.options.temperature
        if self.options.max_tokens:
            request[cap_field(self.base_url)] = self.options.max_tokens
        request.update(self.options.extra_body)
        return request


@dataclass(frozen=True)
class ModelFactory:
    """A model of a real server, as a recipe: calling it makes a fresh `RetryingModel` over an
    `OpenAIModel`. Plain data, so eval's worker processes get it pickled and make their own
    clients."""

    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    options: ClientOptions = field(default_factory=ClientOptions)

    def __call__(self) -> RetryingModel:
        inner = OpenAIModel(model=self.model, base_url=self.base_url, api_key=self.api_key, options=self.options)
        return RetryingModel(inner, attempts=self.options.retries + 1)


# An error of the HTTP library after the request went out: the connection broke mid-reply
_DROPPED = {"ReadError", "RemoteProtocolError", "WriteError"}


def _taken(task: asyncio.Future[Any]) -> None:
    """Take a finished task's error, so that one nobody awaits is not printed at exit."""
    if not task.cancelled():
        task.exception()


def _deadline(timeout: float) -> float:
    """The whole call's deadline. The HTTP library applies the timeout to each step (connect, each
    read), so a server sending a byte every few seconds would never time out; this bounds the call,
    a little after the per-step timeout so a silent server is still called silent."""
    return timeout + min(1.0, max(0.25, timeout / 10))


@functools.lru_cache(maxsize=64)  # asked on every call: parsing the URL each time was 1.5 % of a call's CPU
def cap_field(base_url: str | None) -> str:
    """OpenAI's API takes the completion cap as `max_completion_tokens` (its reasoning models refuse
    `max_tokens`); llama.cpp, vLLM and Ollama read `max_tokens`."""
    from urllib.parse import urlparse

    host = urlparse(base_url).hostname if base_url else "api.openai.com"
    return "max_completion_tokens" if host == "api.openai.com" else "max_tokens"


# what servers say when a prompt does not fit (OpenAI, vLLM, llama.cpp, Ollama)
_CONTEXT_WORDS = ("context length", "context window", "context size", "maximum context", "too many tokens", "context_length_exceeded")


def server_words(exc: Any) -> str:
    """The server's own explanation from an error reply: the `error.message` of a JSON body, else
    the start of the body, as safe one-line text."""
    from ledger_tui.engine.outside import printable

    body = getattr(exc, "body", None)
    message = None
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        message = message or body.get("detail") or body.get("message")
    elif isinstance(body, str):
        message = body
    if not message:
        response = getattr(exc, "response", None)
        try:
            message = response.text if response is not None else ""
        except Exception:
            message = ""
    return printable(str(message or ""), 300)


def status_error(where: str, status: int, words: str) -> ModelError:
    """An HTTP error reply as one sentence with the server's own words; transient when retrying
    may help (rate limits, 5xx), a context overflow when the server says the prompt is too long."""
    said = f": {words}" if words else ""
    lowered = words.lower()
    if status in (400, 413, 422) and any(w in lowered for w in _CONTEXT_WORDS):
        return ContextWindowExceededError(f"The prompt no longer fits the model's context window (HTTP {status}{said}).")
    if status in (408, 409, 429) or status >= 500:
        return TransientModelError(f"The endpoint at {where} answered HTTP {status}{said}; try again or check the server.")
    return ModelError(f"The endpoint at {where} refused the request (HTTP {status}{said}); check --model and the server's options.")


def read_completion(raw: bytes, where: str) -> ModelTurn:
    """One assistant turn from a chat-completions reply body; a reply of another shape is a
    ModelError naming the endpoint, and a tool call with unusable arguments is marked malformed."""
    from ledger_tui.engine.outside import printable

    try:
        text = raw.decode("utf-8")
        if too_deep(text) is not None:  # Python's parser would overflow its stack on it
            raise ValueError("nested too deeply")
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError, RecursionError):
        start = printable(raw[:200].decode("utf-8", "replace"), 120)
        raise NotAChatCompletionError(
            f"The endpoint at {where} did not answer with JSON (it began: {start!r}); check that --base-url serves chat completions."
        ) from None
    choices = data.get("choices") if isinstance(data, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    message = choice.get("message")
    if not isinstance(message, dict):
        start = printable(raw[:200].decode("utf-8", "replace"), 120)
        raise NotAChatCompletionError(
            f"The endpoint at {where} returned no choices (it began: {start!r}); check that --base-url serves chat completions."
        )
    finish = choice.get("finish_reason") if isinstance(choice.get("finish_reason"), str) else None
    calls: list[ToolCall] = []
    malformed: dict[str, str] = {}
    listed = message.get("tool_calls") or []
    if not isinstance(listed, list):
        start = printable(raw[:200].decode("utf-8", "replace"), 120)
        raise NotAChatCompletionError(
            f"The endpoint at {where} returned tool_calls that are not a list (it began: {start!r}); check that --base-url serves chat completions."
        )
    for i, tc in enumerate(listed):
        fn = tc.get("function") if isinstance(tc, dict) else None
        if not isinstance(fn, dict):
            continue
        call_id = str(tc.get("id") or f"call_{i}")
        arguments = fn.get("arguments")
        if isinstance(arguments, dict):  # some servers send an object instead of a JSON string
            args, problem = arguments, None
        else:
            args, problem = parse_arguments(arguments if isinstance(arguments, str) else None)
        if problem and finish == "length":  # cut at the completion cap: say so, not just "bad JSON"
            problem = "the reply was cut at the completion cap (finish_reason: length) before this call's arguments were complete"
        if problem:
            malformed[call_id] = problem
        calls.append(ToolCall(id=call_id, name=str(fn.get("name") or ""), arguments=args))
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    details = usage.get("prompt_tokens_details") if isinstance(usage.get("prompt_tokens_details"), dict) else {}
    cached = details.get("cached_tokens")
    content = message.get("content")
    return ModelTurn(
        text=content if isinstance(content, str) else "",
        tool_calls=tuple(calls),
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=_count(usage.get("completion_tokens")),
        malformed=malformed,
        finish_reason=finish,
        cached_tokens=cached if isinstance(cached, int) and cached >= 0 else None,
    )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and value >= 0 else 0
