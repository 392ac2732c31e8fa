"""What the operator console offers while you type: completion, a tool's signature, the domain's
tools, refusing a tool that does not exist, and a few real customers to play.

Free of Textual, like `console.py`: the play screen asks it for a completion on Tab and for the
line under the input as the text changes.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from ledger_tui.engine.domain import Domain, Tool
from ledger_tui.engine.store.serialize import jsonable
from ledger_tui.ui.console import Command, ConsoleError

COMMANDS = ("/say", "/call", "/me", "/tools", "/end", "/help")
PEOPLE = ("users", "customers", "patients")  # where each domain keeps the people who call


@dataclass(frozen=True)
class Completion:
    line: str  # the line with the word at the cursor completed as far as it is unambiguous
    cursor: int
    choices: tuple[str, ...] = ()  # what the word could still become, when more than one


def _json_type(schema: dict[str, Any]) -> str:
    if "anyOf" in schema:
        return " | ".join(_json_type(s) for s in schema["anyOf"])
    kind = schema.get("type")
    if kind == "array":
        return f"list[{_json_type(schema.get('items', {}))}]"
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    return {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "object": "dict", "null": "null"}.get(
        str(kind), str(kind or "any")
    )


def arguments(tool: Tool) -> list[tuple[str, str, bool]]:
    """(name, type, required) of each argument, in the schema's order."""
    return list(_arguments(tool.args))


@functools.cache
def _arguments(args: type) -> tuple[tuple[str, str, bool], ...]:
    """Once per argument model: the signature line is redrawn at every keystroke, and pydantic's
    schema generation costs milliseconds."""
    schema = args.model_json_schema()  # type: ignore[attr-defined]
    required = set(schema.get("required", ()))
    return tuple((name, _json_type(prop), name in required) for name, prop in schema.get("properties", {}).items())


def signature(tool: Tool) -> str:
    """`cancel_reservation(reservation_id: str) · write`; optional arguments in brackets."""
    args = ", ".join(f"{n}: {t}" if req else f"[{n}: {t}]" for n, t, req in arguments(tool))
    return f"{tool.name}({args}) · {tool.kind}"


def _first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    end = re.search(r"(?<=[a-z0-9)\]])\. (?=[A-Z])", flat)  # not the "." of "( ) ." in a list of symbols
    return flat if end is None else flat[: end.start() + 1]


def _described(tool: Tool) -> list[str]:
    about = _first_sentence(tool.description)
    return [f"  {signature(tool)}"] + ([f"      {about}"] if about else [])


class Guide:
    def __init__(self, domain: Domain) -> None:
        self.domain = domain

    def pool(self, verb: str) -> list[Tool]:
        return list(self.domain.user_tools) if verb == "/me" else list(self.domain.tools)

    def tool(self, verb: str, name: str) -> Tool | None:
        return next((t for t in self.pool(verb) if t.name == name), None)

    # ------------------------------------------------------------------ refusing
    def check(self, command: Command) -> None:
        """A tool the domain does not have never reaches the gate: one sentence, nearest names."""
        if command.kind not in ("call", "me"):
            return
        verb = "/me" if command.kind == "me" else "/call"
        if command.kind == "me" and not self.domain.user_tools:
            raise ConsoleError(f"The {self.domain.name} domain has no customer-side actions; use /call for agent tools.")
        if self.tool(verb, command.name) is not None:
            return
        names = [t.name for t in self.pool(verb)]
        near = difflib.get_close_matches(command.name, names, n=3, cutoff=0.5)
        other = "/call" if verb == "/me" else "/me"
        elsewhere = self.tool(other, command.name) is not None and (other == "/call" or self.domain.user_tools)
        if elsewhere:
            hint = f"it is a {'customer' if other == '/me' else 'agent'} tool: use {other} {command.name}"
        elif near:
            hint = "did you mean " + " or ".join(near) + "?"
        else:
            hint = "/tools lists them"
        whose = "customer-side action" if verb == "/me" else "tool"
        raise ConsoleError(f"{command.name!r} is not a {whose} of the {self.domain.name} domain; {hint}")

    # ------------------------------------------------------------------ listing
    def tools_listing(self) -> list[str]:
        """Each tool's signature and what it does; how the domain identifies a customer."""
        lines = [f"{self.domain.name}: /call acts as the agent"]
        lines += [line for t in self.domain.tools for line in _described(t)]
        if self.domain.user_tools:
            lines.append("/me acts as the customer on their phone")
            lines += [line for t in self.domain.user_tools for line in _described(t)]
        gate = getattr(self.domain, "read_gate", None)
        if gate is not None:
            lines += ["", f"The customer is identified by {gate.identify}."]
        return lines

    def hint(self, line: str) -> str:
        """The line under the input: the signature of the tool being typed, else nothing."""
        parts = line.split()
        if len(parts) >= 2 and parts[0] in ("/call", "/me"):
            tool = self.tool(parts[0], parts[1])
            if tool is not None:
                return f"{signature(tool)} — {_first_sentence(tool.description)}"
        return ""

    # ------------------------------------------------------------------ completing
    def complete(self, line: str, cursor: int, values: Callable[[str, str], Sequence[str]]) -> Completion:
        """Complete the word before `cursor`. `values(tool, argument)` gives the values to offer
        for an argument (ids seen in the session), best first."""
        before, after = line[:cursor], line[cursor:]
        words = before.split(" ")
        word = words[-1]
        if len(words) == 1:
            if not word.startswith("/"):
                return Completion(line, cursor)
            return self._finish(before, after, word, [c for c in COMMANDS], space=True)
        verb = words[0]
        if verb not in ("/call", "/me"):
            return Completion(line, cursor)
        if len(words) == 2:
            return self._finish(before, after, word, [t.name for t in self.pool(verb)], space=True)
        tool = self.tool(verb, words[1])
        if tool is None:
            return Completion(line, cursor)
        if "=" in word:
            name, _, typed = word.partition("=")
            offered = [_literal(v) for v in values(tool.name, name)]
            return self._finish(before, after, typed, offered, space=True)
        given = {w.split("=", 1)[0] for w in words[2:-1] if "=" in w}
        names = [f"{n}=" for n, _, _ in arguments(tool) if n not in given]
        return self._finish(before, after, word, names, space=False)

    @staticmethod
    def _finish(before: str, after: str, word: str, options: Iterable[str], space: bool) -> Completion:
        matches = list(dict.fromkeys(o for o in options if o.startswith(word)))
        if not matches:
            return Completion(before + after, len(before))
        if len(matches) == 1:
            done = matches[0] + (" " if space and not after.startswith(" ") else "")
            head = before[: len(before) - len(word)] + done
            return Completion(head + after, len(head))
        common = matches[0]
        for m in matches[1:]:
            while not m.startswith(common):
                common = common[:-1]
        head = before[: len(before) - len(word)] + common
        return Completion(head + after, len(head), tuple(matches))


def _literal(value: str) -> str:
    """How a value is typed on the console: bare when it reads back as the same string."""
    try:
        same = json.loads(value) == value
    except ValueError:
        same = " " not in value
    return value if same and " " not in value else json.dumps(value)


def seen_values(tool: str, argument: str, calls: Iterable[tuple[str, dict[str, Any]]], ledger: Any) -> list[str]:
    """Values to offer for `argument`: what earlier calls passed for it (this tool's first), then
    ids of records the ledger holds under the matching collection (`reservation_id` →
    `reservations.*`), then the same field in any record read."""
    out: list[str] = []
    calls = list(calls)
    for name, args in sorted(calls, key=lambda c: c[0] != tool):
        value = args.get(argument)
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            out.append(str(value))
    stem = argument[:-3] if argument.endswith("_id") else argument
    for path in ledger:
        head, _, rest = path.partition(".")
        if rest and stem and head.rstrip("s") == stem.rstrip("s"):
            value = ledger.value(path)
            if isinstance(value, str) and "." not in rest:
                out.append(value)  # an alias (`users.current`) holds the id, its key is no id
            else:
                out.append(rest.split(".", 1)[0])
    for path in ledger:
        value = ledger.value(path)
        if isinstance(value, dict):
            found = value.get(argument)
            if isinstance(found, (str, int)) and not isinstance(found, bool):
                out.append(str(found))
            listed = value.get(stem + "s")
            if isinstance(listed, list):
                out.extend(str(v) for v in listed if isinstance(v, (str, int)))
    return list(dict.fromkeys(out))


def starters(domain: Domain, db: Any, count: int = 3) -> list[str]:
    """A few real people of the domain's database to play, with what identifies them: those who
    have records (reservations, orders, lines, appointments) first."""
    db = getattr(db, "agent_db", db)  # telecom: the agent's side of a database with the customer's phone beside it
    for name in PEOPLE:
        records = getattr(db, name, None)
        if records is None:
            continue
        items = list(records.values()) if isinstance(records, Mapping) else list(records)
        people = [jsonable(r) for r in items[: count * 20]]
        people.sort(key=lambda p: not any(isinstance(v, list) and v for v in p.values()))
        return [_person(p) for p in people[:count]]
    return []


def _person(p: dict[str, Any]) -> str:
    pid = next((str(v) for k, v in p.items() if k.endswith("_id") and isinstance(v, str)), "?")
    name = p.get("name")
    if isinstance(name, dict):
        name = " ".join(str(v) for v in name.values() if v)
    name = name or p.get("full_name") or " ".join(str(p[k]) for k in ("first_name", "last_name") if p.get(k))
    # what the domains identify a caller by: an email, a line's phone number (telecom), a zip code
    # with the name (retail)
    contact = p.get("email") or p.get("phone")
    address = p.get("address") if isinstance(p.get("address"), dict) else {}
    zip_code = f"zip {address['zip']}" if address.get("zip") else None
    extra = ", ".join(str(x) for x in (name, contact, p.get("phone_number"), zip_code) if x)
    return f"{pid} ({extra})" if extra else pid
