"""A lean HTTP/1.1 transport under the model clients' `openai.AsyncOpenAI`.

The HTTP library's own transport (its connection pool, its HTTP/1.1 state machine and its
async-library adapter) cost about half of the CPU of a model call with many sessions in flight, all
of it on the one core that also runs the sessions. This one keeps one list of idle keep-alive
connections per server and speaks HTTP/1.1 over asyncio streams: a request is one write, a reply one
read of its head and one of its body when they have arrived.

Above it, the SDK builds a client's first chat request, and every request it must build itself
(auth hooks, cookies); the later ones go out as `DirectPost`s: the bytes the SDK sent for that
first one with another body, their replies read and their errors raised as the SDK does.

It behaves as the default transport does where the model client can tell: each step (connect,
write, every read) has its own timeout from the request (`ConnectTimeout`, `WriteTimeout`,
`ReadTimeout`, so a silent server is a timeout and a trickling one is cut by the call's own
deadline); a connection that fails is `ConnectError`, one reset or cut short mid-reply is
`ReadError` or `RemoteProtocolError`, never resent; `Content-Length`, chunked and close-delimited
bodies are read; content encodings are decoded by the HTTP client above it; idle connections are
dropped after 5 seconds (the default keep-alive expiry), or as soon as the server closes them.

Endpoints reached through a proxy (`HTTP(S)_PROXY`, `ALL_PROXY` and `NO_PROXY` in the
environment) keep the HTTP library's own transport, which knows how to talk to proxies.

It is built on whichever HTTP library the installed `openai` is built on (`httpx2` from openai 3,
`httpx` before), so every release the project accepts gets it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import ssl
from types import ModuleType
from typing import Any

import openai


def http_library() -> ModuleType:
    """The HTTP library the installed `openai` SDK is built on: its default client is a subclass of
    the library's `AsyncClient`."""
    client = next(c for c in openai.DefaultAsyncHttpxClient.__mro__ if c.__name__ == "AsyncClient")
    return importlib.import_module(client.__module__.partition(".")[0])


http = http_library()

KEEPALIVE_EXPIRY = 5.0  # seconds an idle connection is kept (httpx's default)
MAX_IDLE = 1000  # idle connections kept per server
READ_SIZE = 65_536  # bytes asked of the socket per read, as the HTTP library does
HEAD_LIMIT = 1 << 20  # a reply's status line and headers, at most


def proxied(url: str) -> bool:
    """Whether the environment routes requests to `url` through a proxy (as the HTTP library reads
    it: HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY)."""
    from urllib.parse import urlsplit
    from urllib.request import getproxies_environment, proxy_bypass_environment

    proxies = getproxies_environment()
    parts = urlsplit(url)
    if not (proxies.get(parts.scheme or "https") or proxies.get("all")):
        return False
    return not proxy_bypass_environment(parts.hostname or "", proxies)


class _Connection:
    __slots__ = ("idle_since", "reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.idle_since = 0.0

    def usable(self, now: float) -> bool:
        return (
            now - self.idle_since < KEEPALIVE_EXPIRY
            and not self.reader.at_eof()
            and self.reader.exception() is None
            and not self.writer.transport.is_closing()
        )

    def close(self) -> None:
        with contextlib.suppress(Exception):  # a connection already gone is closed
            self.writer.close()


def _timeouts(request: http.Request) -> tuple[float | None, float | None, float | None]:
    t = request.extensions.get("timeout") or {}
    return t.get("connect"), t.get("read"), t.get("write")


class FastTransport(http.AsyncBaseTransport):
    """HTTP/1.1 keep-alive connections on asyncio streams, shared by every request of one event
    loop (see the module's text)."""

    def __init__(self, ssl_context: ssl.SSLContext | None = None) -> None:
        self._ssl = ssl_context
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self._closed = False
        self.opened = 0  # connections made, for tests and figures

    # ------------------------------------------------------------------ connections
    async def _connect(self, scheme: str, host: str, port: int, timeout: float | None) -> _Connection:
        context = None
        if scheme == "https":
            context = self._ssl if isinstance(self._ssl, ssl.SSLContext) else ssl.create_default_context()
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(
                    host, port, ssl=context, server_hostname=host if context else None, limit=HEAD_LIMIT
                )
        except TimeoutError:
            raise http.ConnectTimeout(f"No connection to {host}:{port} within {timeout} s.") from None
        except (OSError, ssl.SSLError) as exc:
            raise http.ConnectError(str(exc) or type(exc).__name__) from exc
        self.opened += 1
        return _Connection(reader, writer)

    def _lease(self, key: tuple[str, str, int], now: float) -> _Connection | None:
        idle = self._idle.get(key)
        while idle:
            conn = idle.pop()
            if conn.usable(now):
                return conn
            conn.close()
        return None

    def _release(self, key: tuple[str, str, int], conn: _Connection) -> None:
        idle = self._idle.setdefault(key, [])
        if self._closed or len(idle) >= MAX_IDLE:
            conn.close()
            return
        conn.idle_since = asyncio.get_running_loop().time()
        idle.append(conn)

    async def aclose(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, {}
        for conns in idle.values():
            for conn in conns:
                conn.close()

    # ------------------------------------------------------------------ one request
    async def handle_async_request(self, request: http.Request) -> http.Response:
        url = request.url
        scheme = url.scheme
        if scheme not in ("http", "https"):
            raise http.UnsupportedProtocol(f"Request URL has an unsupported protocol '{scheme}://'.")
        body = await request.aread()
        head = [request.method.encode("ascii"), b" ", url.raw_path, b" HTTP/1.1\r\n"]
        chunked = False
        for name, value in request.headers.raw:
            if name.lower() == b"transfer-encoding" and b"chunked" in value.lower():
                chunked = True
            head += (name, b": ", value, b"\r\n")
        head.append(b"\r\n")
        if chunked:
            body = (b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)) if body else b"0\r\n\r\n"
        status, reason, version, headers, content = await self.exchange(
            (scheme, url.host, url.port or (443 if scheme == "https" else 80)), b"".join(head) + body, request.method, _timeouts(request)
        )
        return http.Response(
            status,
            headers=headers,
            stream=http.ByteStream(content),
            extensions={"http_version": version, "reason_phrase": reason},
        )

    async def exchange(
        self, key: tuple[str, str, int], payload: bytes, method: str, timeouts: tuple[float | None, float | None, float | None]
    ) -> tuple[int, bytes, bytes, list[tuple[bytes, bytes]], bytes]:
        """Send one request's bytes to the server `key` (scheme, host, port) on an idle connection or
        a new one, and read the reply: (status, reason, version, headers, body as sent)."""
        connect_t, read_t, write_t = timeouts
        loop = asyncio.get_running_loop()
        conn = self._lease(key, loop.time()) or await self._connect(*key, connect_t)
        reusable = False
        try:
            try:
                conn.writer.write(payload)
                if conn.writer.transport.get_write_buffer_size():
                    async with asyncio.timeout(write_t):
                        await conn.writer.drain()
            except TimeoutError:
                raise http.WriteTimeout(f"The request was not sent within {write_t} s.") from None
            except OSError as exc:
                raise http.WriteError(str(exc) or type(exc).__name__) from exc
            status, reason, version, headers, close = await self._read_head(conn.reader, read_t)
            content, reusable = await self._read_body(conn.reader, method, status, headers, read_t)
            reusable = reusable and not close
        finally:
            if reusable:
                self._release(key, conn)
            else:
                conn.close()
        return status, reason, version, headers, content

    # ------------------------------------------------------------------ reading
    @staticmethod
    async def _read(call: Any, timeout: float | None) -> bytes:
        """One read of the reply, with the read timeout and the HTTP library's errors."""
        try:
            async with asyncio.timeout(timeout):
                return await call
        except TimeoutError:
            raise http.ReadTimeout(f"No reply within {timeout} s.") from None
        except asyncio.IncompleteReadError as exc:
            if exc.partial or exc.expected is not None:
                raise http.RemoteProtocolError("The server closed the connection before the reply was complete.") from None
            raise http.RemoteProtocolError("Server disconnected without sending a response.") from None
        except asyncio.LimitOverrunError:
            raise http.RemoteProtocolError("The reply's headers are too long.") from None
        except (OSError, ValueError) as exc:  # a reset connection; a damaged TLS stream
            raise http.ReadError(str(exc) or type(exc).__name__) from exc

    async def _read_head(
        self, reader: asyncio.StreamReader, timeout: float | None
    ) -> tuple[int, bytes, bytes, list[tuple[bytes, bytes]], bool]:
        while True:
            head = await self._read(reader.readuntil(b"\r\n\r\n"), timeout)
            lines = head[:-4].split(b"\r\n")
            version, _, rest = lines[0].partition(b" ")
            code, _, reason = rest.partition(b" ")
            try:
                status = int(code)
            except ValueError:
                raise http.RemoteProtocolError("The reply does not begin with an HTTP status line.") from None
            if not version.startswith(b"HTTP/1.") or not 100 <= status <= 999:
                raise http.RemoteProtocolError("The reply does not begin with an HTTP/1.x status line.")
            if 100 <= status < 200 and status != 101:
                continue  # an interim reply (100 Continue, 103 Early Hints): the real one follows
            headers = []
            close = version == b"HTTP/1.0"
            for line in lines[1:]:
                name, sep, value = line.partition(b":")
                if not sep:
                    raise http.RemoteProtocolError("The reply has a malformed header line.")
                name, value = name.strip(), value.strip()
                if name.lower() == b"connection":
                    tokens = value.lower()
                    close = b"close" in tokens or (close and b"keep-alive" not in tokens)
                headers.append((name, value))
            return status, reason, version, headers, close

    async def _read_body(
        self, reader: asyncio.StreamReader, method: str, status: int, headers: list[tuple[bytes, bytes]], timeout: float | None
    ) -> tuple[bytes, bool]:
        """The reply's body and whether the connection may carry another request."""
        if method == "HEAD" or status in (204, 304) or status < 200:
            return b"", True
        length = None
        chunked = False
        for name, value in headers:
            lowered = name.lower()
            if lowered == b"transfer-encoding" and b"chunked" in value.lower():
                chunked = True
            elif lowered == b"content-length":
                try:
                    length = int(value)
                except ValueError:
                    raise http.RemoteProtocolError("The reply has an invalid Content-Length.") from None
                if length < 0:
                    raise http.RemoteProtocolError("The reply has an invalid Content-Length.")
        if chunked:
            return await self._read_chunked(reader, timeout), True
        if length is not None:
            # read by read, each with the read timeout (as the HTTP library does): a reply trickling
            # in is cut by the call's own deadline, not called silent
            parts = []
            left = length
            while left:
                part = await self._read(reader.read(min(left, READ_SIZE)), timeout)
                if not part:
                    raise http.RemoteProtocolError("The server closed the connection before the reply was complete.")
                parts.append(part)
                left -= len(part)
            return b"".join(parts), True
        parts = []  # no length: the body ends when the server closes the connection
        while True:
            part = await self._read(reader.read(READ_SIZE), timeout)
            if not part:
                return b"".join(parts), False
            parts.append(part)

    async def _read_chunked(self, reader: asyncio.StreamReader, timeout: float | None) -> bytes:
        parts = []
        while True:
            line = await self._read(reader.readuntil(b"\r\n"), timeout)
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise http.RemoteProtocolError("The reply has a malformed chunk size.") from None
            if size == 0:
                while (await self._read(reader.readuntil(b"\r\n"), timeout)) != b"\r\n":
                    pass  # trailers
                return b"".join(parts)
            chunk = await self._read(reader.readexactly(size + 2), timeout)
            parts.append(chunk[:-2])


class LeanClient(http.AsyncClient):
    """The HTTP client handed to `openai.AsyncOpenAI`, on a `FastTransport`: the same requests as
    the library's own client, built and sent with less work per call. The URL of each path is
    parsed once, the client's default headers are merged in one pass, and a request without auth,
    event hooks or cookies goes straight to the transport; anything else (a redirect, auth, hooks)
    takes the library's own path."""

    def __init__(self, transport: FastTransport, **kwargs: Any) -> None:
        super().__init__(transport=transport, **kwargs)
        self._fast = transport
        self._urls: dict[str, http.URL] = {}
        # the last request the SDK sent through here, by method and URL: what a `DirectPost` copies
        self.sent: dict[tuple[str, str], http.Request] = {}

    def build_request(  # type: ignore[override]
        self,
        method: str,
        url: Any,
        *,
        content: Any = None,
        data: Any = None,
        files: Any = None,
        json: Any = None,
        params: Any = None,
        headers: Any = None,
        cookies: Any = None,
        timeout: Any = http.USE_CLIENT_DEFAULT,
        extensions: Any = None,
    ) -> http.Request:
        plain = (
            isinstance(url, str) and data is None and files is None and json is None and not params and not cookies
            and not self.cookies and not self.params and isinstance(headers, list) and extensions is None
            and not isinstance(timeout, http._client.UseClientDefault)
        )
        if not plain:
            return super().build_request(
                method, url, content=content, data=data, files=files, json=json, params=params, headers=headers,
                cookies=cookies, timeout=timeout, extensions=extensions,
            )
        merged = self._urls.get(url)
        if merged is None:
            merged = self._merge_url(url)
            if len(self._urls) < 256:
                self._urls[url] = merged
        # the client's defaults, less those the call sets, then the call's (as Headers.update does)
        given = {k.lower() for k, _ in headers}
        pairs = [(k, v) for k, v in self.headers.multi_items() if k not in given] + headers
        return http.Request(
            method, merged, content=content, headers=pairs,
            extensions={"timeout": http.Timeout(timeout).as_dict()},
        )

    async def send(  # type: ignore[override]
        self,
        request: http.Request,
        *,
        stream: bool = False,
        auth: Any = http.USE_CLIENT_DEFAULT,
        follow_redirects: Any = http.USE_CLIENT_DEFAULT,
    ) -> http.Response:
        if (
            self.is_closed or self._auth is not None or not isinstance(auth, http._client.UseClientDefault)
            or self._event_hooks["request"] or self._event_hooks["response"] or self._mounts
        ):
            return await super().send(request, stream=stream, auth=auth, follow_redirects=follow_redirects)
        import time

        started = time.perf_counter()
        self._set_timeout(request)
        if len(self.sent) < 256 or (request.method, str(request.url)) in self.sent:
            self.sent[(request.method, str(request.url))] = request
        response = await self._fast.handle_async_request(request)
        return await self.finish(request, response, started, stream=stream, auth=auth, follow_redirects=follow_redirects)

    def plain(self) -> bool:
        """Whether a request goes from `send` straight to the transport (no auth, hooks, mounts or
        cookies to add, the client open)."""
        return not (
            self.is_closed or self._auth is not None or self._event_hooks["request"] or self._event_hooks["response"]
            or self._mounts or _has_cookies(self.cookies)
        )

    async def finish(
        self, request: http.Request, response: http.Response, started: float, *, stream: bool = False, auth: Any = http.USE_CLIENT_DEFAULT,
        follow_redirects: Any = http.USE_CLIENT_DEFAULT,
    ) -> http.Response:
        """What the library does with a reply the transport read: its body decoded, its cookies
        kept, its redirect followed."""
        import datetime
        import time

        response.request = request
        response.default_encoding = self._default_encoding
        try:
            await response.aread()
        except BaseException:
            await response.aclose()
            raise
        response.elapsed = datetime.timedelta(seconds=time.perf_counter() - started)
        if "set-cookie" in response.headers:  # kept and sent back, as the library does
            self.cookies.extract_cookies(response)
        if response.has_redirect_location:
            follow = self.follow_redirects if isinstance(follow_redirects, http._client.UseClientDefault) else follow_redirects
            if follow:
                return await super().send(
                    self._build_redirect_request(request, response), stream=stream, auth=auth, follow_redirects=True
                )
            response.next_request = self._build_redirect_request(request, response)
        return response


def _has_cookies(cookies: Any) -> bool:
    """Whether the client holds cookies: an empty jar's table of domains is empty (asking the jar
    itself walks it, per call)."""
    table = getattr(getattr(cookies, "jar", None), "_cookies", None)
    return bool(cookies) if not isinstance(table, dict) else bool(table)


# reply headers after which a reply is not its body as sent: decoded, cookies kept (a redirect is 3xx)
_NOT_PLAIN = (b"content-encoding", b"set-cookie")


class DirectPost:
    """POSTs to one URL of an `openai.AsyncOpenAI` client sent as the SDK sent the request it is
    made from: the same request line and headers (the SDK's own, built for that client: none of
    them changes from one call to the next but the body's length), another body. The SDK's
    request path (its options model, header merging, retry loop, auth hooks, response wrapper)
    was a fifth of the harness's CPU per model call with hundreds of sessions in flight; this
    sends the bytes the SDK would send and reads the reply as the SDK reads it, raising its own
    errors (`APITimeoutError`, `APIConnectionError`, its status errors made by the client itself).
    A reply that is not plain 2xx JSON (encoded, setting cookies, a redirect, an error) is handed
    to the HTTP client's own handling first, as `LeanClient.send` does."""

    def __init__(self, client: Any, lean: LeanClient, sent: http.Request) -> None:
        self.client = client
        self.lean = lean
        url = sent.url
        self.url = url
        self.key = (url.scheme, url.host, url.port or (443 if url.scheme == "https" else 80))
        self.timeouts = _timeouts(sent)
        self.extensions = dict(sent.extensions)
        self.headers = [(name, value) for name, value in sent.headers.raw if name.lower() != b"content-length"]
        before = [b"POST ", url.raw_path, b" HTTP/1.1\r\n"]
        after: list[bytes] = []
        for name, value in sent.headers.raw:
            if name.lower() == b"content-length":
                before += (name, b": ")
                after = [b"\r\n"]
            else:
                (after if after else before).extend((name, b": ", value, b"\r\n"))
        after.append(b"\r\n")
        self.before, self.after = b"".join(before), b"".join(after)

    @classmethod
    def of(cls, client: Any, path: str) -> DirectPost | None:
        """The direct POSTs to `path` of `client`, once the SDK has sent one there through a
        `LeanClient`; None where the SDK would build each request its own way (auth hooks or
        providers, an idempotency header, retries, a chunked body) or has not sent one yet."""
        lean = getattr(client, "_client", None)
        if not isinstance(lean, LeanClient) or getattr(client, "max_retries", None) != 0:
            return None
        if any(getattr(client, name, None) is not None for name in ("custom_auth", "_idempotency_header", "_workload_identity_auth", "_provider_runtime")):
            return None
        try:
            sent = lean.sent.get(("POST", str(client._prepare_url(path))))
        except Exception:  # noqa: BLE001 - an SDK without it: its own path
            return None
        if sent is None or sent.method != "POST":
            return None
        names = [name.lower() for name, _ in sent.headers.raw]
        if names.count(b"content-length") != 1 or b"transfer-encoding" in names:
            return None
        return cls(client, lean, sent)

    def _request(self, content: bytes) -> http.Request:
        return http.Request("POST", self.url, headers=self.headers, content=content, extensions=self.extensions)

    async def __call__(self, content: bytes) -> bytes:
        """The reply's body to a POST of `content` (bytes as the SDK sends them)."""
        import time

        import openai

        started = time.perf_counter()
        try:
            status, reason, version, headers, body = await self.lean._fast.exchange(
                self.key, b"%s%d%s%s" % (self.before, len(content), self.after, content), "POST", self.timeouts
            )
            if 200 <= status < 300 and not any(name.lower() in _NOT_PLAIN for name, _ in headers):
                return body
            request = self._request(content)
            response = await self.lean.finish(
                request, http.Response(status, headers=headers, stream=http.ByteStream(body),
                                       extensions={"http_version": version, "reason_phrase": reason}), started,
            )
        except http.TimeoutException as exc:
            raise openai.APITimeoutError(request=self._request(content)) from exc
        except (http.RequestError, ssl.SSLError) as exc:
            raise openai.APIConnectionError(request=self._request(content)) from exc
        if response.is_error:
            raise self.client._make_status_error_from_response(response) from None
        return response.content
