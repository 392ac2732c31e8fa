"""An OpenAI-compatible chat-completions server on 127.0.0.1, scripted per test.

It answers `POST /v1/chat/completions` from a responder function (request JSON -> reply spec), so
tests exercise the real `openai.AsyncOpenAI` client path without any network. Reply specs:
`{"text": ..., "tool_calls": [{"name":..., "arguments": <dict or raw str>}]}` or
`{"status": 500}` / `{"status": 429}` (failure injection) or `{"hang": seconds}` (timeouts).
Every request body is kept in `requests` for assertions. Latency is configurable.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

Responder = Callable[[dict[str, Any]], dict[str, Any]]


class LoopbackServer:
    def __init__(self, responder: Responder, latency: float = 0.0) -> None:
        self.responder = responder
        self.latency = latency
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def setup(self) -> None:
                # headers and body go out in separate writes: without TCP_NODELAY, Nagle's
                # algorithm and the client's delayed ACK add ~40 ms to every response
                self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                super().setup()

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append(body)
                    spec = server.responder(body)
                if server.latency:
                    time.sleep(server.latency)
                if "hang" in spec:
                    time.sleep(spec["hang"])
                status = spec.get("status", 200)
                if status != 200:
                    payload = json.dumps({"error": {"message": "injected failure", "type": "server_error"}}).encode()
                else:
                    payload = json.dumps(_completion(body, spec)).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        class Server(ThreadingHTTPServer):
            request_queue_size = 256  # many clients connect at once; the default backlog of 5 stalls them

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> "LoopbackServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


_counter = 0


def _completion(request: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
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
    message: dict[str, Any] = {"role": "assistant", "content": spec.get("text")}
    if calls:
        message["tool_calls"] = calls
    prompt_chars = sum(len(json.dumps(m)) for m in request.get("messages", []))
    return {
        "id": f"chatcmpl-{_counter}",
        "object": "chat.completion",
        "created": 0,
        "model": request.get("model", "loopback"),
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {
            "prompt_tokens": prompt_chars // 4,
            "completion_tokens": 10,
            "total_tokens": prompt_chars // 4 + 10,
        },
    }


def sequence(replies: list[dict[str, Any]]) -> Responder:
    """A responder that returns `replies` in order (then plain text 'done')."""
    queue = list(replies)

    def respond(_: dict[str, Any]) -> dict[str, Any]:
        return queue.pop(0) if queue else {"text": "done"}

    return respond


def serve_in_subprocess(responder_spec: str, latency: float = 0.0):
    """Start `python -m tests.loopback SPEC LATENCY` in another process (no GIL shared with the
    code under test); returns (process, base_url). SPEC is `module:function` returning a responder."""
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
    with LoopbackServer(factory(), latency=float(sys.argv[2])) as server:
        print(server.base_url, flush=True)
        try:
            server.thread.join()
        except KeyboardInterrupt:
            pass
