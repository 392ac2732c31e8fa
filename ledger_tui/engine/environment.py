"""The environment: a private copy of a domain's database and the tools that act on it.

Bad calls never raise out of here: an unknown tool, arguments that do not validate, or a tool that
refuses all come back as an error result the model reads (`Error: …`), as in τ²-bench.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ledger_tui.engine.domain import Domain, MistypedArgument, Tool
from ledger_tui.engine.events import ToolCall
from ledger_tui.engine.cow import reading
from ledger_tui.engine.serialize import jsonable, tool_text


def refused(tool: Tool, problems: list[str]) -> Outcome:
    """The refusal of arguments that do not validate (or a mistyped one a write will not store)."""
    return Outcome(f"Error: invalid arguments for {tool.name}: " + "; ".join(problems), True, tool=tool)


_SIGNATURES: dict[type, tuple[frozenset[str], tuple[str, ...]]] = {}


def _signature(args: type) -> tuple[frozenset[str], tuple[str, ...]]:
    """(every argument, the required ones in order) of an argument model, read once."""
    found = _SIGNATURES.get(args)
    if found is None:
        fields = args.model_fields  # type: ignore[attr-defined]
        found = _SIGNATURES[args] = (frozenset(fields), tuple(n for n, info in fields.items() if info.is_required()))
    return found


def call_problem(tool: Tool, arguments: dict[str, Any], toolkit: str) -> str | None:
    """What Python says when τ²-bench calls the tool's method with these keyword arguments: an
    argument it does not take (named first, as Python does), else the required ones left out."""
    names, required = _signature(tool.args)
    for name in arguments:
        if name not in names:
            return f"{toolkit}.{tool.name}() got an unexpected keyword argument '{name}'"
    missing = [f"'{name}'" for name in required if name not in arguments]
    if not missing:
        return None
    if len(missing) == 1:
        listed = missing[0]
    elif len(missing) == 2:
        listed = f"{missing[0]} and {missing[1]}"
    else:
        listed = ", ".join(missing[:-1]) + f", and {missing[-1]}"
    plural = "s" if len(missing) > 1 else ""
    return f"{toolkit}.{tool.name}() missing {len(missing)} required positional argument{plural}: {listed}"


def validated(tool: Tool, arguments: dict[str, Any]) -> Any:
    """The tool's argument model. A value of the JSON type the tool declares is validated as usual;
    a value of another type ("3" for a count, a list for an id) is never converted: where
    `tool.runs_raw` allows it the tool gets it as given (τ²-bench runs its tools unchecked, so a
    lookup by a mistyped id finds nothing), else the call is refused with the validation error."""
    try:
        return tool.args.model_validate_json(json.dumps(arguments), strict=True)
    except ValidationError as exc:
        wrong = {str(e["loc"][0]) for e in exc.errors() if e.get("loc")}
        if not wrong or not all(tool.runs_raw(name) for name in wrong):
            raise
    values = {}
    for name, value in arguments.items():
        if name in wrong:
            values[name] = value
        else:
            annotation = tool.args.model_fields[name].annotation
            values[name] = TypeAdapter(annotation).validate_json(json.dumps(value), strict=True)
    return tool.args.model_construct(**values)


@dataclass(frozen=True)
class Outcome:
    content: str
    error: bool
    # the raw return of a successful call, for the ledger's path map: records may be the session's
    # own or shared read-only ones, so take `jsonable(value)` before the next call changes them
    value: Any = None
    tool: Tool | None = None


class Environment:
    def __init__(self, domain: Domain, db: Any | None = None, db_path: Path | None = None) -> None:
        self.domain = domain
        self.db = db if db is not None else domain.session_db(db_path)
        if domain.sync is not None:
            domain.sync(self.db)
        # memo of the digests, dropped by any call that may change state
        self._digests: tuple[str, str | None] | None = None
        self._tools: dict[tuple[str, str], Tool | None] = {}

    def execute(self, call: ToolCall) -> Outcome:
        requestor = "user" if call.requestor == "user" else "assistant"
        try:
            tool = self._tools[(call.name, requestor)]
        except KeyError:
            tool = self._tools[(call.name, requestor)] = self.domain.tool(call.name, requestor)
        if tool is None:
            if requestor == "user" and not self.domain.user_tools:
                return Outcome("Error: user tools are not available in this domain", True)
            return Outcome(f"Error: Tool '{call.name}' not found.", True)
        toolkit = self.domain.user_toolkit if requestor == "user" else self.domain.toolkit
        problem = call_problem(tool, call.arguments, toolkit)
        if problem:
            return Outcome(f"Error: {problem}", True, tool=tool)
        try:
            args = validated(tool, call.arguments)
        except ValidationError as exc:
            lines = [
                f"{'.'.join(str(x) for x in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()[:6]
            ]
            return refused(tool, lines)
        if tool.kind != "read" or self.domain.sync is not None:
            self._digests = None
        try:
            if tool.kind == "read":
                with reading(self.db):
                    value = tool.run(self.db, args)
                    text = tool_text(value)
                    if self.domain.sync is not None:  # the sync step after the call may change it
                        value = jsonable(value)
                return self._finish(text, value, tool)
            value = tool.run(self.db, args)
        except MistypedArgument as exc:
            return refused(tool, [str(exc)])
        except Exception as exc:  # ToolError and anything a tool raises: the model reads it
            return Outcome(f"Error: {exc}", True, tool=tool)
        return self._finish(tool_text(value), value, tool)

    def _finish(self, text: str, value: Any, tool: Tool) -> Outcome:
        if self.domain.sync is not None:
            try:
                self.domain.sync(self.db)
            except Exception as exc:
                return Outcome(f"Error: {exc}", True, tool=tool)
        return Outcome(text, False, value=value, tool=tool)

    def touched(self) -> None:
        """The db was changed from outside `execute` (task set-up): forget cached digests."""
        self._digests = None

    def digests(self) -> tuple[str, str | None]:
        """Agent and user db digests; recomputed only after a call that may have changed state
        (an untouched copy-on-write db answers from its pristine copy's digest)."""
        if self._digests is None:
            self._digests = self.domain.digests(self.db)
        return self._digests
