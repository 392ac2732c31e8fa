"""`play` asks the model server once before the workbench opens: a wrong URL or key is one
sentence, not a spinner after the first message; a server without the route is not an error."""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator

import pytest
from typer.testing import CliRunner

from ledger_tui.cli import app
from ledger_tui.engine.model.probe import check_endpoint


def serve(status: int) -> Iterator[str]:
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            seen.append(self.headers.get("Authorization", ""))
            body = b'{"object": "list", "data": [{"id": "m", "object": "model"}]}' if status == 200 else b'{"error": {"message": "no"}}'
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_nothing_listening_is_one_sentence_before_the_workbench_opens(free_port: int, tmp_path):
    out = tmp_path / "s.jsonl"
    result = CliRunner().invoke(app, ["play", "-d", "airline", "--base-url", f"http://127.0.0.1:{free_port}/v1", "--out", str(out)])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output
    assert lines[0].startswith(f"Cannot reach the model server at http://127.0.0.1:{free_port}/v1")
    assert "--base-url" in lines[0] and "--no-model" in lines[0]
    assert not out.exists()


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_key_names_the_key(status: int):
    for url in serve(status):
        problem = check_endpoint(url, "sk-wrong")
        assert problem == f"The model server at {url} refused the API key (HTTP {status}); set a valid --api-key (or OPENAI_API_KEY)."


@pytest.mark.parametrize("status", [200, 404, 405, 500])
def test_a_server_that_answers_is_not_stopped(status: int):
    for url in serve(status):
        assert check_endpoint(url, None) is None


def test_a_base_url_that_is_not_a_url_is_named():
    assert check_endpoint("localhost:8080", None) == (
        "--base-url (or OPENAI_BASE_URL) 'localhost:8080' is not an http(s) URL; give one like http://127.0.0.1:8080/v1."
    )
