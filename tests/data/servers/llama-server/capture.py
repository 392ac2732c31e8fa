"""Capture llama-server's replies to the requests ledger-tui's client makes (and a few it should not).

Run against `scripts/local-model.sh` (SmolLM2-135M-Instruct on 127.0.0.1:8081):

    .venv/bin/python tests/data/servers/llama-server/capture.py [--base http://127.0.0.1:8081]

Each case's reply body is written byte for byte to `<case>.json` (`<case>_<status>.json` when the
status is not 200) next to this file, and `cases.json` lists, per case, the request (method, path,
body; a long filler text abbreviated), the status, the content type and the file. The loopback
server in tests can replay a file with `{"raw": <body>, "status": ..., "content_type": ...}`.
Standard library only, so the bytes sent and received are exactly the ones recorded.
"""

from __future__ import annotations

import argparse
import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent

SYSTEM = "You are an airline customer service agent. Use the tools to look up reservations before answering."
USER = "Hi, please look up my reservation ZFA04Y."

# two of the airline domain's own tool schemas, as ledger-tui sends them
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_reservation_details",
            "description": "Look up a reservation by its six-character id (e.g. 'ZFA04Y'): route, cabin, segments, passengers, payments, bags, insurance, booking time and status.",
            "parameters": {
                "additionalProperties": False,
                "properties": {"reservation_id": {"title": "Reservation Id", "type": "string"}},
                "required": ["reservation_id"],
                "type": "object",
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_user_details",
            "description": "Look up a user by user id (e.g. 'mia_li_3668'): profile, saved payment methods, saved passengers, membership level and reservation ids.",
            "parameters": {
                "additionalProperties": False,
                "properties": {"user_id": {"title": "User Id", "type": "string"}},
                "required": ["user_id"],
                "type": "object",
            },
        },
    },
]

CALL = {
    "id": "call_0",
    "type": "function",
    "function": {"name": "get_reservation_details", "arguments": "{\"reservation_id\": \"ZFA04Y\"}"},
}
RESULT = '{"reservation_id": "ZFA04Y", "user_id": "mia_li_3668", "origin": "JFK", "destination": "SEA", "cabin": "economy", "status": "active"}'


def chat(**fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "smollm2", "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}]}
    body.update(fields)
    return body


def after_call(assistant_content: Any, **fields: Any) -> dict[str, Any]:
    """A conversation after one tool call: the assistant message carries `assistant_content`."""
    assistant: dict[str, Any] = {"role": "assistant", "content": assistant_content, "tool_calls": [CALL]}
    if assistant_content is ...:
        del assistant["content"]
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": USER},
        assistant,
        {"role": "tool", "tool_call_id": "call_0", "content": RESULT},
    ]
    return {"model": "smollm2", "messages": messages, "tools": TOOLS, "tool_choice": "auto", "temperature": 0, "max_tokens": 48, **fields}


SEEDED = {"temperature": 0.8, "seed": 6, "cache_prompt": False}

FILLER = "ledger "  # one token for SmolLM2's tokenizer (checked with /tokenize)


def filler(n: int) -> str:
    return FILLER * n


def cases(n_ctx: int) -> list[tuple[str, str, str, Any, dict[str, str]]]:
    """(case, method, path, body, {long text: its abbreviation in cases.json})."""
    over = n_ctx + 200
    near = n_ctx - 40
    nonce = f"Session {int(time.time())}. "
    cache_body = chat(
        messages=[{"role": "system", "content": nonce + SYSTEM + " " + filler(600)}, {"role": "user", "content": USER}],
        temperature=0,
        max_tokens=8,
    )
    return [
        ("health", "GET", "/health", None, {}),
        ("models", "GET", "/v1/models", None, {}),
        ("props", "GET", "/props", None, {}),
        ("tokenize", "POST", "/tokenize", {"content": "Hi, please look up my reservation ZFA04Y."}, {}),
        ("tokenize_filler", "POST", "/tokenize", {"content": filler(4)}, {}),
        # what the model sees: the template applied, with and without tool_choice
        ("apply_template_tool_choice_auto", "POST", "/apply-template", chat(tools=TOOLS, tool_choice="auto"), {}),
        ("apply_template_tool_choice_absent", "POST", "/apply-template", chat(tools=TOOLS), {}),
        ("apply_template_null_content", "POST", "/apply-template", after_call(None), {}),
        # tools offered: tool_choice "auto", absent, "required", "none"
        ("tool_choice_auto", "POST", "/v1/chat/completions", chat(tools=TOOLS, tool_choice="auto", temperature=0, max_tokens=24), {}),
        ("tool_choice_absent", "POST", "/v1/chat/completions", chat(tools=TOOLS, temperature=0, max_tokens=24), {}),
        # real tool calls. SmolLM2-135M rarely writes one: at temperature 0.8, seeds 38 and 6 do (38
        # ends the turn, 6 goes on calling). The prompt cache is off in these (cache_prompt: false):
        # with it, the same seed gives another reply once part of the prompt is cached (the numbers
        # differ), so a rerun would not repeat it.
        ("tool_call", "POST", "/v1/chat/completions", chat(tools=TOOLS, tool_choice="auto", **{**SEEDED, "seed": 38}, max_tokens=150), {}),
        ("parallel_tool_calls_false", "POST", "/v1/chat/completions", chat(tools=TOOLS, tool_choice="auto", parallel_tool_calls=False, **{**SEEDED, "seed": 38}, max_tokens=150), {}),
        ("tool_calls_parallel_length", "POST", "/v1/chat/completions", chat(tools=TOOLS, tool_choice="auto", **SEEDED, max_tokens=120), {}),
        ("length_cut_in_tool_call", "POST", "/v1/chat/completions", chat(tools=TOOLS, tool_choice="auto", **SEEDED, max_tokens=32), {}),
        ("length_cut_before_tool_call", "POST", "/v1/chat/completions", chat(tools=TOOLS, tool_choice="auto", **SEEDED, max_tokens=16), {}),
        # "required" only requires a call somewhere: the grammar lets text come first
        ("tool_choice_required", "POST", "/v1/chat/completions", chat(tools=TOOLS, tool_choice="required", temperature=0, max_tokens=24), {}),
        ("tool_choice_none", "POST", "/v1/chat/completions", chat(tools=TOOLS, tool_choice="none", temperature=0, max_tokens=32), {}),
        # the assistant turn that made a call, sent back with content null, "" or no content
        ("assistant_content_null", "POST", "/v1/chat/completions", after_call(None), {}),
        ("assistant_content_empty", "POST", "/v1/chat/completions", after_call(""), {}),
        ("assistant_content_missing", "POST", "/v1/chat/completions", after_call(...), {}),
        # arguments as a JSON object instead of a string (some clients send that)
        (
            "assistant_arguments_object",
            "POST",
            "/v1/chat/completions",
            {**after_call(""), "messages": [
                *after_call("")["messages"][:2],
                {"role": "assistant", "content": "", "tool_calls": [{**CALL, "function": {"name": CALL["function"]["name"], "arguments": {"reservation_id": "ZFA04Y"}}}]},
                after_call("")["messages"][3],
            ]},
            {},
        ),
        # the completion cap under both names, and no temperature at all
        ("max_tokens", "POST", "/v1/chat/completions", chat(temperature=0, max_tokens=5), {}),
        ("max_completion_tokens", "POST", "/v1/chat/completions", chat(temperature=0, max_completion_tokens=5), {}),
        ("max_tokens_beyond_window", "POST", "/v1/chat/completions", chat(temperature=0, max_tokens=100000), {}),
        ("temperature_absent", "POST", "/v1/chat/completions", chat(max_tokens=16), {}),
        # cut at the cap: plain text, and in the middle of a forced tool call
        ("length_cut", "POST", "/v1/chat/completions", chat(temperature=0, max_tokens=3), {}),
        # prompt-prefix cache: the same (fresh) request twice
        ("cache_first", "POST", "/v1/chat/completions", cache_body, {cache_body["messages"][0]["content"]: f"{nonce}{SYSTEM} + 'ledger ' × 600"}),
        ("cache_repeat", "POST", "/v1/chat/completions", cache_body, {cache_body["messages"][0]["content"]: f"{nonce}{SYSTEM} + 'ledger ' × 600"}),
        # a prompt over the window; and one that fits but leaves less room than max_tokens asks for
        ("context_exceeded", "POST", "/v1/chat/completions", chat(messages=[{"role": "user", "content": filler(over)}], max_tokens=16), {filler(over): f"'ledger ' × {over}"}),
        ("context_nearly_full", "POST", "/v1/chat/completions", chat(messages=[{"role": "user", "content": filler(near) + "Say hello."}], temperature=0, max_tokens=100), {filler(near) + "Say hello.": f"'ledger ' × {near} + 'Say hello.'"}),
        # names and shapes it may refuse
        ("unknown_model", "POST", "/v1/chat/completions", chat(model="gpt-4o-mini", temperature=0, max_tokens=5), {}),
        ("model_missing", "POST", "/v1/chat/completions", {k: v for k, v in chat(temperature=0, max_tokens=5).items() if k != "model"}, {}),
        ("messages_missing", "POST", "/v1/chat/completions", {"model": "smollm2"}, {}),
        ("bad_role", "POST", "/v1/chat/completions", chat(messages=[{"role": "customer", "content": USER}], max_tokens=5), {}),
        ("tool_message_without_call", "POST", "/v1/chat/completions", chat(messages=[{"role": "user", "content": USER}, {"role": "tool", "tool_call_id": "call_9", "content": RESULT}], max_tokens=5), {}),
        ("not_json", "POST", "/v1/chat/completions", b"{not json", {}),
        ("unknown_path", "POST", "/v1/chat/complete", chat(max_tokens=5), {}),
    ]


def send(base: str, method: str, path: str, body: Any) -> tuple[int, str, bytes, float]:
    data = body if isinstance(body, bytes) else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(base + path, data=data, method=method, headers={"Content-Type": "application/json"} if data is not None else {})
    start = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=600) as reply:
            return reply.status, reply.headers.get("Content-Type", ""), reply.read(), time.monotonic() - start
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read(), time.monotonic() - start


def abbreviate(value: Any, long: dict[str, str]) -> Any:
    """The request as cases.json shows it: long filler texts named, the shared tools as "<TOOLS>"."""
    if value == TOOLS:
        return "<TOOLS>"
    if isinstance(value, str):
        return f"<{long[value]}>" if value in long else value
    if isinstance(value, dict):
        return {k: abbreviate(v, long) for k, v in value.items()}
    if isinstance(value, list):
        return [abbreviate(v, long) for v in value]
    return value


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", default="http://127.0.0.1:8081")
    parser.add_argument("--only", help="comma-separated cases")
    args = parser.parse_args()
    props = json.loads(send(args.base, "GET", "/props", None)[2])
    n_ctx = props["default_generation_settings"]["n_ctx"]
    index_path = HERE / "cases.json"
    index = json.loads(index_path.read_text()) if index_path.exists() else {}
    only = set(args.only.split(",")) if args.only else None
    for name, method, path, body, long in cases(n_ctx):
        if only and name not in only:
            continue
        status, content_type, raw, took = send(args.base, method, path, body)
        file = f"{name}.json" if status == 200 else f"{name}_{status}.json"
        for old in HERE.glob(f"{name}*.json"):  # a rerun may answer with another status
            if old.stem == name or old.stem.removeprefix(name + "_").isdigit():
                old.unlink()
        (HERE / file).write_bytes(raw)
        shown = body.decode() if isinstance(body, bytes) else abbreviate(body, long)
        index[name] = {"request": {"method": method, "path": path, "body": shown}, "status": status, "content_type": content_type, "file": file, "seconds": round(took, 2)}
        print(f"{name:36} {status} {len(raw):6} B {took:6.2f} s  {raw[:160]!r}")
    write_index(index_path, index)


def write_index(path: Path, index: dict[str, Any]) -> None:
    """One line per case; "<TOOLS>" in a request stands for the tool list under "_TOOLS"."""
    index = {"_TOOLS": TOOLS, **{k: v for k, v in index.items() if k != "_TOOLS"}}
    lines = [f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in index.items()]
    path.write_text("{\n" + ",\n".join(lines) + "\n}\n")


if __name__ == "__main__":
    main()
