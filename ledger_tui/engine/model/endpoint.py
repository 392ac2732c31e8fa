"""The `AsyncOpenAI` clients of one endpoint, shared on one event loop by every model that calls it.

A model is made and closed with its session, but 256 sessions of an eval must not each build a
client (~15 ms of TLS set-up) nor each hold connections: this module owns that sharing — which
client takes the next request, the one TLS context, the client class that parses a path's URL once,
and what the server said of itself (its context window, how its `/tokenize` is asked) — so that
`models.OpenAIModel` holds only what a model does with one call.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from ledger_tui.engine.model import body

# The model clients send over `transport.FastTransport` (a fraction of the CPU per call of the HTTP
# library's own pool); LEDGER_TUI_HTTP=default (read as each endpoint's clients are made) keeps the
# library's transport, as before.
HTTP_SETTING = "LEDGER_TUI_HTTP"


class Endpoint:
    """The `AsyncOpenAI` clients of one endpoint on one event loop, shared by every model that
    calls it, so concurrent sessions reuse connections.

    A client's connection pool looks at each of its connections on every request, so a single pool
    for 64 sessions costs more CPU per call than the call's own work. Clients therefore take at most
    `PER_CLIENT` requests at once, and a request goes to a client with an idle connection if there
    is one (a pool opens a connection only when all of its connections are busy, so a client whose
    requests in flight are below its peak has one idle). All clients reuse one TLS context, which
    otherwise costs ~15 ms of certificate loading per client.

    Unless a proxy is set or LEDGER_TUI_HTTP=default, the clients send over one `FastTransport`
    (ledger_tui/engine/model/transport.py) whose idle connections are a list: one client then serves
    every session, and the per-call CPU of the client path is about half."""

    PER_CLIENT = 8

    def __init__(self, key: str, base_url: str | None, timeout: float, max_retries: int) -> None:
        self.slot: tuple[Any, ...] | None = None  # its place among the shared endpoints, set by `join`
        self.per_client = self.PER_CLIENT
        self._options = dict(api_key=key, base_url=base_url, timeout=timeout, max_retries=max_retries)
        self.clients: list[list[Any]] = []  # [client, requests in flight, most ever in flight]
        self.users = 0
        # what the server said of itself: each model's context window, and how its /tokenize is
        # asked ("content" or "prompt"; False: it has none; None: not yet known)
        self.windows: dict[str, tuple[int, str] | None] = {}
        self.asking: dict[str, asyncio.Future[Any]] = {}  # the question in flight, per model
        self.tokenize: str | bool | None = None
        # whether requests go as bytes encoded here (body.py): the SDK sends them as they are and
        # encodes a request to the same bytes (None: not yet checked, on the first request)
        self.raw_bodies: bool | None = None
        self.transport: Any = None
        # each client's direct chat POSTs (transport.DirectPost), made from the first one the SDK sent
        self.posts: dict[int, Any] = {}
        if os.environ.get(HTTP_SETTING, "") != "default":
            from ledger_tui.engine.model.transport import FastTransport, proxied

            if not proxied(base_url or "https://api.openai.com/v1"):
                # one pool of idle connections, taken and given back in O(1): one client serves all
                self.transport = FastTransport(tls_context())
                self.per_client = 1 << 30

    def lease(self) -> list[Any]:
        """The client for the next request; the caller counts the request in and out of entry[1]."""
        idle = [e for e in self.clients if e[1] < e[2]]
        if idle:
            return max(idle, key=lambda e: e[1])
        room = [e for e in self.clients if e[1] < self.per_client]
        if room:
            entry = max(room, key=lambda e: e[1])
        else:
            import openai

            if self.transport is not None:
                from ledger_tui.engine.model.transport import LeanClient

                http = LeanClient(self.transport, timeout=openai.DEFAULT_TIMEOUT, follow_redirects=True)
            else:
                http = openai.DefaultAsyncHttpxClient(verify=tls_context())
            entry = [_openai_class()(**self._options, http_client=http), 0, 0]
            self.clients.append(entry)
        entry[2] += 1
        return entry

    def body(self, client: Any, request: dict[str, Any]) -> dict[str, Any]:
        """How `client.post` is given `request`: as `content`, its bytes with the prompt's prefix
        encoded once (body.py), where they are what the SDK would send; else as `body`."""
        if self.raw_bodies is False:
            return {"body": request}
        try:
            encoded = body.encode(request)
        except (TypeError, ValueError):  # the SDK encodes it, and says what is wrong, as before
            return {"body": request}
        if self.raw_bodies is None:
            self.raw_bodies = _sends_as_encoded(client, request, encoded)
        return {"content": encoded} if self.raw_bodies else {"body": request}

    def direct(self, client: Any, given: dict[str, Any]) -> Any:
        """The `transport.DirectPost` that sends `given` (a body in bytes) to the chat path as
        `client.post` would, once the SDK has sent one request there over the lean transport; None
        until then, and for anything the SDK must build itself (a body as a dict, cookies or
        hooks on the client, LEDGER_TUI_HTTP=default)."""
        if self.transport is None or "content" not in given:
            return None
        post = self.posts.get(id(client))
        if post is None:
            from ledger_tui.engine.model.transport import DirectPost

            post = DirectPost.of(client, "/chat/completions")
            if post is None:
                return None
            self.posts[id(client)] = post
        return post if post.lean.plain() else None

    async def leave(self) -> None:
        """One model leaves; the last one closes the connections."""
        self.users -= 1
        if self.users <= 0:
            if self.slot is not None and _ENDPOINTS.get(self.slot) is self:
                del _ENDPOINTS[self.slot]
            await self.close()

    async def close(self) -> None:
        # a question still in flight (a context window asked at Ctrl-C) ends before its client
        # does: left running, it would fail on the closed client and asyncio.run would print that
        asking, self.asking = list(self.asking.values()), {}
        for task in asking:
            task.cancel()
        if asking:
            await asyncio.gather(*asking, return_exceptions=True)
        clients, self.clients = self.clients, []
        for entry in clients:
            await entry[0].close()
        if self.transport is not None:
            await self.transport.aclose()


_CLIENT_CLASS: list[Any] = []


def _openai_class() -> Any:
    """`openai.AsyncOpenAI`, with one change: the URL of each request path is parsed once per
    client and base URL, not on every call (two URL parses were ~6 % of a call's CPU)."""
    if not _CLIENT_CLASS:
        import openai

        class AsyncOpenAI(openai.AsyncOpenAI):
            def _prepare_url(self, url: str) -> Any:
                cache = self.__dict__.setdefault("_ledger_tui_urls", {})
                hit = cache.get(url)
                if hit is not None and hit[0] is self._base_url:
                    return hit[1]
                prepared = super()._prepare_url(url)
                if len(cache) < 256:
                    cache[url] = (self._base_url, prepared)
                return prepared

        _CLIENT_CLASS.append(AsyncOpenAI if hasattr(openai.AsyncOpenAI, "_prepare_url") else openai.AsyncOpenAI)
    return _CLIENT_CLASS[0]


_ENDPOINTS: dict[tuple[Any, ...], Endpoint] = {}
_TLS: list[Any] = []


def tls_context() -> Any:
    """One TLS context for every client, made as the SDK's HTTP library makes its default one
    (`httpx2` for openai 3, `httpx` before); True, each client making its own, if it cannot say."""
    if not _TLS:
        from ledger_tui.engine.model.transport import http_library

        make = getattr(http_library(), "create_ssl_context", None)
        try:
            _TLS.append(make() if make is not None else True)
        except TypeError:  # an older signature
            _TLS.append(True)
    return _TLS[0]


def _sends_as_encoded(client: Any, request: dict[str, Any], encoded: bytes) -> bool:
    """Whether the SDK builds the same HTTP request (headers and body) from `encoded` as its
    `content` as from `request`: it takes bytes as they are (openai 3) and its own encoding is the
    one body.py makes."""
    try:
        from openai._models import FinalRequestOptions

        built = [
            client._build_request(FinalRequestOptions.construct(method="post", url="/chat/completions", **given))
            for given in ({"json_data": request}, {"content": encoded})
        ]
        return built[0].content == built[1].content == encoded and list(built[0].headers.raw) == list(built[1].headers.raw)
    except Exception:  # noqa: BLE001 - any SDK that cannot say so keeps sending dicts
        return False


def join(config: tuple[str, str | None, float, int]) -> Endpoint:
    """This loop's shared clients for an endpoint (key, base URL, timeout, retries), counting one
    more model in; the model calls `leave` when it closes."""
    key = (id(asyncio.get_running_loop()), *config)
    endpoint = _ENDPOINTS.get(key)
    if endpoint is None:
        endpoint = _ENDPOINTS[key] = Endpoint(*config)
        endpoint.slot = key
    endpoint.users += 1
    return endpoint
