"""The model client's lean HTTP transport (ledger_tui/engine/model/transport.py) under `openai.AsyncOpenAI`:
the reply shapes HTTP/1.1 allows besides the loopback server's own (chunked, gzip, close-delimited,
an interim 100, a redirect), connection reuse, and the library's transport kept behind a proxy."""

from __future__ import annotations

import asyncio
import gzip
import json

import pytest

from ledger_tui.engine.errors import ModelError
from ledger_tui.engine.model.endpoint import Endpoint
from ledger_tui.engine.model.models import ClientOptions, OpenAIModel
from tests.loopback import LoopbackServer, sequence

COMPLETION = {
    "id": "c1", "object": "chat.completion", "created": 0, "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello there"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 7, "completion_tokens": 2},
}
BODY = json.dumps(COMPLETION).encode()


class RawServer:
    """Answers each request with the next canned bytes (then closes if `close`)."""

    def __init__(self, replies: list[bytes]) -> None:
        self.replies = list(replies)
        self.paths: list[str] = []
        self.heads: list[bytes] = []
        self.connections = 0

    async def __aenter__(self) -> "RawServer":
        self.server = await asyncio.start_server(self.serve, "127.0.0.1", 0)
        self.base_url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/v1"
        return self

    async def __aexit__(self, *exc) -> None:
        self.server.close()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while self.replies:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode().split("\r\n")
                self.paths.append(lines[0].split(" ")[1])
                self.heads.append(head)
                length = next((int(v) for k, _, v in (x.partition(":") for x in lines[1:]) if k.lower() == "content-length"), 0)
                await reader.readexactly(length)
                reply = self.replies.pop(0)
                writer.write(reply)
                await writer.drain()
                if b"Connection: close" in reply.split(b"\r\n\r\n")[0]:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


def model(base_url: str) -> OpenAIModel:
    return OpenAIModel(model="m", base_url=base_url, api_key="k", options=ClientOptions(timeout=5))


def chunked(body: bytes, size: int = 7) -> bytes:
    parts = [b"%x\r\n%s\r\n" % (len(body[i : i + size]), body[i : i + size]) for i in range(0, len(body), size)]
    return b"".join(parts) + b"0\r\n\r\n"


async def ask(m: OpenAIModel) -> str:
    turn = await m.complete([{"role": "user", "content": "hi"}], [])
    return turn.text


async def test_chunked_gzip_close_delimited_interim_and_redirected_replies_are_read():
    zipped = gzip.compress(BODY)
    replies = [
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(BODY),
        b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(zipped) + zipped,
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(BODY) + BODY,
        b"HTTP/1.1 307 Temporary Redirect\r\nLocation: /v1/elsewhere\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(BODY) + BODY,
        b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n" + BODY,
    ]
    async with RawServer(replies) as server:
        m = model(server.base_url)
        texts = [await ask(m) for _ in range(5)]
        await m.aclose()
    assert texts == ["hello there"] * 5
    assert server.paths[3:5] == ["/v1/chat/completions", "/v1/elsewhere"]
    # every reply but the close-delimited last one left its connection open for the next request
    assert server.connections == 1


async def test_sessions_reuse_a_few_keep_alive_connections_and_close_them():
    with LoopbackServer(sequence([]), latency=0.01) as server:
        m = model(server.base_url)

        async def session():
            for _ in range(5):
                assert await ask(m) == "done"

        await asyncio.gather(*(session() for _ in range(8)))
        transport = m._join().transport
        assert transport is not None and transport.opened == server.connections <= 8
        await m.aclose()
        for _ in range(50):
            if server.open_connections == 0:
                break
            await asyncio.sleep(0.01)
        assert server.open_connections == 0
        assert len(server.requests) == 40


async def test_a_proxied_endpoint_keeps_the_http_librarys_own_transport(monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    assert Endpoint("k", "http://model.example/v1", 5, 0).transport is None
    monkeypatch.setenv("NO_PROXY", "model.example")
    assert Endpoint("k", "http://model.example/v1", 5, 0).transport is not None


async def test_sessions_that_start_together_ask_the_server_its_window_once():
    routes = {"/props": {"default_generation_settings": {"n_ctx": 4096}}}
    with LoopbackServer(sequence([]), latency=0.05, routes=routes) as server:
        models = [model(server.base_url) for _ in range(16)]
        windows = await asyncio.gather(*(m.context_window() for m in models))
        for m in models:
            await m.aclose()
    assert windows == [(4096, "llama.cpp /props")] * 16
    assert server.hits == {"/props": 1}


@pytest.mark.parametrize(
    "failure",
    [
        {"status": 500}, {"status": 429}, {"status": 401}, {"status": 404},
        {"status": 400, "body": {"error": {"message": "This model's maximum context length is 8192 tokens"}}},
        {"raw": "<html>busy</html>", "content_type": "text/html"}, {"reset": 10}, {"hang": 2},
    ],
)
async def test_a_failure_after_the_first_call_is_the_one_the_sdk_raises(failure):
    """From the second call on, requests go without the SDK's request path (transport.DirectPost):
    each failure is still the sentence the SDK's own error gives."""
    with LoopbackServer(sequence([failure, failure, {"text": "fine"}])) as server:
        m = OpenAIModel(model="m", base_url=server.base_url, api_key="k", options=ClientOptions(timeout=0.3))
        said = []
        for _ in range(2):
            with pytest.raises(ModelError) as caught:
                await ask(m)
            said.append((type(caught.value), str(caught.value)))
        assert m._join().posts, "the second call went directly"
        assert await ask(m) == "fine"
        await m.aclose()
    assert said[0] == said[1]


async def test_a_cookie_the_server_sets_is_sent_back_on_the_calls_after_it():
    ok = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(BODY) + BODY
    cookie = b"HTTP/1.1 200 OK\r\nSet-Cookie: route=b2; Path=/\r\nContent-Length: %d\r\n\r\n" % len(BODY) + BODY
    async with RawServer([ok, cookie, ok, ok]) as server:
        m = model(server.base_url)
        texts = [await ask(m) for _ in range(4)]
        await m.aclose()
    assert texts == ["hello there"] * 4
    assert [b"route=b2" in head for head in server.heads] == [False, False, True, True]
