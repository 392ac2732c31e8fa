"""An OpenAI-compatible chat-completions server on 127.0.0.1, scripted per test.

It answers `POST …/chat/completions` from a responder function (request JSON -> reply spec), so
tests exercise the real `openai.AsyncOpenAI` client path without any network. Reply specs:
`{"text": ..., "tool_calls": [{"name":..., "arguments": <dict or raw str>}]}` or
`{"status": 500}` / `{"status": 429}` (failure injection), `{"hang": seconds}` (timeouts),
`{"until": threading.Event, …}` (the reply held until the event is set), or
`{"raw": text}` (a reply with exactly that body, with `status` if given, and `content_type`),
`{"status": 400, "body": {...}}` (an error reply with that JSON body), `{"reset": n}` (the headers
and the first n bytes of the body, then a TCP reset), `{"trickle": seconds}` (the headers at once,
then the body one byte every `seconds`), and for completions
`finish_reason`, `usage` (a dict, or None to leave it out) and `content` (sent as given, even
null). Every request body is kept in `requests`,
and `connections` / `open_connections` count the TCP connections clients made.

`latency` is the time from a request's arrival to its reply, as a model endpoint would take; the
server's own parsing and encoding happen inside it. One asyncio loop on a background thread serves
every connection (HTTP/1.1 keep-alive), so many concurrent clients do not queue behind a pool of
threads contending for the GIL.
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import threading
from typing import Any, Callable

Responder = Callable[[dict[str, Any]], dict[str, Any]]

_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 429: "Too Many Requests", 500: "Internal Server Error", 503: "Service Unavailable"}


class LoopbackServer:
    def __init__(
        self, responder: Responder, latency: float = 0.0, keep_requests: bool = True, routes: dict[str, Any] | None = None
    ) -> None:
        self.responder = responder
        # other paths a real server answers (`/props`, `/tokenize`): path -> JSON body, or a
        # function of the request body; `hits` counts the requests to each
        self.routes = routes or {}
        self.hits: dict[str, int] = {}
        self.latency = latency
        # a benchmark's server answers thousands of long requests: keeping them all would grow its
        # heap and slow its garbage collection, and with it every reply
        self.keep_requests = keep_requests
        self.requests: list[dict[str, Any]] = []
        self.connections = 0
        self.open_connections = 0
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._server: asyncio.AbstractServer | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> "LoopbackServer":
        self.thread.start()
        self._ready.wait()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self.thread.join(timeout=5)

    def _run(self) -> None:
        loop = self._loop
        asyncio.set_event_loop(loop)
        # a backlog of 256: many clients connect at once, and the default stalls them
        self._server = loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0, backlog=256))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            self._server.close()
            tasks = asyncio.all_tasks(loop)
            for task in tasks:
                task.cancel()
            if tasks:
                loop.run_until_complete(asyncio.wait(tasks, timeout=1))
            loop.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        loop = asyncio.get_running_loop()
        self.connections += 1
        self.open_connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                arrived = loop.time()
                lines = head.decode("latin-1").split("\r\n")
                method = lines[0].split(" ", 1)[0]
                headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
                raw = await reader.readexactly(int(headers.get("content-length") or 0))
                path = lines[0].split(" ")[1] if len(lines[0].split(" ")) > 1 else ""
                if path in self.routes:
                    self.hits[path] = self.hits.get(path, 0) + 1
                    route = self.routes[path]
                    answer = route(json.loads(raw or b"{}")) if callable(route) else route
                    status, payload, spec = 200, json.dumps(answer).encode(), {}
                elif method != "POST":
                    status, payload, spec = 404, b"{}", {}
                else:
                    body = json.loads(raw or b"{}")
                    if self.keep_requests:
                        self.requests.append(body)
                    spec = self.responder(body)
                    status = spec.get("status", 200)
                    if "raw" in spec:
                        payload = spec["raw"].encode()
                    elif status != 200:
                        error = spec.get("body", {"error": {"message": "injected failure", "type": "server_error"}})
                        payload = json.dumps(error).encode()
                    else:
                        payload = json.dumps(_completion(body, spec, len(raw))).encode()
                wait = self.latency - (loop.time() - arrived)
                if wait > 0:
                    await asyncio.sleep(wait)
                if "hang" in spec:
                    await asyncio.sleep(spec["hang"])
                while "until" in spec and not spec["until"].is_set():  # held until the test lets it go
                    await asyncio.sleep(0.02)
                head = (
                    f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\nContent-Type: {spec.get('content_type', 'application/json')}\r\n"
                    f"Content-Length: {len(payload)}\r\n\r\n".encode()
                )
                if "reset" in spec:  # part of the reply, then the connection is reset (RST, not FIN)
                    writer.write(head + payload[: spec["reset"]])
                    await writer.drain()
                    writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    writer.transport.abort()
                    break
                if "trickle" in spec:  # the headers at once, then the body a byte at a time
                    writer.write(head)
                    for i in range(len(payload)):
                        await writer.drain()
                        await asyncio.sleep(spec["trickle"])
                        writer.write(payload[i : i + 1])
                else:
                    writer.write(head + payload)
                await writer.drain()
                if headers.get("connection", "").lower() == "close":
                    break
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, asyncio.CancelledError):
            pass  # the client closed the connection (or gave up on a hung request), or the server stops
        finally:
            self.open_connections -= 1
            writer.close()


_counter = 0


def _completion(request: dict[str, Any], spec: dict[str, Any], size: int) -> dict[str, Any]:
    """A chat completion from a reply spec; usage counts the request body at ~4 bytes a token."""
    global _counter
    _counter += 1
    calls = []
    for i, c in enumerate(spec.get("tool_calls") or []):
        args = c.get("arguments", {})
        calls.append(
            {
                "id": c.get("id") or f"call_{_counter}_{i}",
                "type": "function",
                "function": {"name": c["name"], "arguments": args if isinstance(args, str) else json.dumps(args)},
            }
        )
    message: dict[str, Any] = {"role": "assistant", "content": spec["content"] if "content" in spec else spec.get("text")}
    if calls:
        message["tool_calls"] = calls
    reply = {
        "id": f"chatcmpl-{_counter}",
        "object": "chat.completion",
        "created": 0,
        "model": request.get("model", "loopback"),
        "choices": [{"index": 0, "message": message, "finish_reason": spec.get("finish_reason") or ("tool_calls" if calls else "stop")}],
        "usage": {
            "prompt_tokens": size // 4,
            "completion_tokens": 10,
            "total_tokens": size // 4 + 10,
        },
    }
    if "usage" in spec:
        if spec["usage"] is None:
            del reply["usage"]
        else:
            reply["usage"] = spec["usage"]
    return reply


def sequence(replies: list[dict[str, Any]]) -> Responder:
    """A responder that returns `replies` in order (then plain text 'done')."""
    queue = list(replies)

    def respond(_: dict[str, Any]) -> dict[str, Any]:
        return queue.pop(0) if queue else {"text": "done"}

    return respond


def serve_in_subprocess(responder_spec: str, latency: float = 0.0):
    """Start `python -m tests.loopback SPEC LATENCY` in another process (no GIL shared with the
    code under test); returns (process, base_url). SPEC is `module:function` returning a responder.
    That server keeps no request log."""
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.loopback", responder_spec, str(latency)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    base_url = proc.stdout.readline().strip()
    return proc, base_url


if __name__ == "__main__":
    import importlib
    import sys

    module, _, name = sys.argv[1].partition(":")
    factory = getattr(importlib.import_module(module), name)
    with LoopbackServer(factory(), latency=float(sys.argv[2]), keep_requests=False) as server:
        print(server.base_url, flush=True)
        try:
            server.thread.join()
        except KeyboardInterrupt:
            pass
