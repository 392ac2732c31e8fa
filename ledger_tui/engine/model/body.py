"""A chat-completions request body as JSON bytes, with the prompt's prefix encoded once.

Every request of a session, and of every session of a domain, starts with the same system prompt
(the instructions and the policy, ~9 KB for airline) and carries the same tool schemas (~8 KB);
encoding them again on each call was most of the JSON work of a request, and JSON encoding most of
the SDK's request building, with hundreds of sessions in flight. The bytes made here are the SDK's
own (`openai._utils._json.openapi_dumps`: compact separators, UTF-8 left unescaped, no NaN) — a
JSON object's encoding is its members' encodings joined, so members encoded earlier can be spliced
in. `endpoint.Endpoint.body` checks once per endpoint that the installed SDK sends bytes as they are
and encodes a request to the same bytes; where it does not (older SDKs), requests go as dicts.
"""

from __future__ import annotations

import copy
import json
from typing import Any

_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode

KEPT = 16  # system prompts and tool lists remembered (an eval has one or two of each per task)

_prefixes: dict[tuple[Any, ...], str] = {}  # a first message's encoding, by its keys and content
_tool_lists: list[tuple[list[Any], list[Any], str]] = []  # (the list sent, a copy of it then, its encoding)


def encode(request: dict[str, Any]) -> bytes:
    """The request as the SDK would encode it; TypeError or ValueError (a value JSON cannot hold,
    a key that is not a string, a lone surrogate) where the caller should let the SDK say so."""
    members = []
    for key, value in request.items():
        if type(key) is not str:
            raise TypeError("a key that is not a string")
        if key == "messages" and type(value) is list and value:
            encoded = _messages(value)
        elif key == "tools" and type(value) is list:
            encoded = _tools(value)
        else:
            encoded = _encode(value)
        members.append(f"{_encode(key)}:{encoded}")
    return ("{" + ",".join(members) + "}").encode()


def _messages(messages: list[Any]) -> str:
    first = _first(messages[0])
    if len(messages) == 1:
        return f"[{first}]"
    return f"[{first},{_encode(messages[1:])[1:]}"


def _first(message: Any) -> str:
    """The system prompt's encoding, remembered by its text (strings cannot change)."""
    content = message.get("content") if type(message) is dict and len(message) == 2 else None
    if type(content) is not str or type(message.get("role")) is not str:
        return _encode(message)
    key = (*message, message["role"], content)
    encoded = _prefixes.get(key)
    if encoded is None:
        if len(_prefixes) >= KEPT:
            _prefixes.clear()
        encoded = _prefixes[key] = _encode(message)
    return encoded


def _tools(tools: list[Any]) -> str:
    """The tool schemas' encoding, remembered for the list a domain hands every session (the same
    object each call) while it still equals the copy taken when it was encoded."""
    for given, then, encoded in _tool_lists:
        if given is tools and tools == then:
            return encoded
    encoded = _encode(tools)
    if len(_tool_lists) >= KEPT:
        del _tool_lists[0]
    _tool_lists.append((tools, copy.deepcopy(tools), encoded))
    return encoded
