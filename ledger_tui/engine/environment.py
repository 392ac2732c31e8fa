"""The environment: a private copy of a domain's database and the tools that act on it.

Bad calls never raise out of here: an unknown tool, arguments that do not validate, or a tool that
refuses all come back as an error result the model reads (`Error: …`), as in τ²-bench.

A call's own work is small (a lookup, a few checks, a tool that reads or changes a record or two),
so what it costs is mostly how much code and data it touches for the first time since the CPU's
caches were last filled by something else: a call right after another session's set-up costs
three to seven times the same call repeated (`send_certificate` 42 against 11 µs,
`transfer_to_human_agents` 63 against 9 µs). The common calls are therefore kept short: each tool's
`CallPlan` is worked out once per domain, and arguments that are all of the types the tool
declares (text, one of a `Literal`'s texts, whole numbers, lists of text or of records of such
values) become its argument model directly, without the JSON round trip through strict pydantic
validation that every other call takes: the same model with the same values
(`tests/engine/test_call_plan.py`), and whatever is not taken directly gets the same refusal.
"""

from __future__ import annotations

import json
import math
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Strict, TypeAdapter, ValidationError, WithJsonSchema

from ledger_tui.engine.domain import Domain, MistypedArgument, Tool
from ledger_tui.engine.events import ToolCall
from ledger_tui.engine.store.cow import reading
from ledger_tui.engine.store.serialize import jsonable, tool_text


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


# the kinds of argument `CallPlan.direct` takes as given: text, a whole number, a number (whole or
# not, kept as given), a list of text; a `frozenset` is a choice of texts (a `Literal`), a
# `_Records` a list of records (JSON objects made into a model the same way)
_TEXT, _WHOLE, _NUMBER, _TEXTS = "text", "whole", "number", "texts"
_LIMIT = 2**63  # larger whole numbers take the JSON path (which also refuses past 4,300 digits)
_ABSENT = object()


@dataclass(frozen=True)
class _Records:
    model: type[BaseModel]
    fields: tuple[tuple[str, Any], ...]


def _kind(annotation: Any, metadata: list[Any]) -> Any:
    """How a field of this type takes a value as given, or None (the JSON path then)."""
    if any(not isinstance(m, WithJsonSchema) for m in metadata):
        return None
    if annotation is str:
        return _TEXT
    if annotation is int:
        return _WHOLE
    origin, members = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal and members and all(type(m) is str for m in members):
        return frozenset(members)
    if origin is list and members == (str,):
        return _TEXTS
    if origin is list and len(members) == 1 and isinstance(members[0], type) and issubclass(members[0], BaseModel):
        fields = _direct_fields(members[0], nested=True)
        return None if fields is None else _Records(members[0], fields)
    if origin in (typing.Union, types.UnionType):
        bases = set()
        for member in members:
            if typing.get_origin(member) is typing.Annotated:
                member, *marks = typing.get_args(member)
                if any(not isinstance(m, Strict) for m in marks):
                    return None
            bases.add(member)
        if bases == {int, float}:  # an int stays an int, a float a float, as strict validation keeps them
            return _NUMBER
    return None


def _direct_fields(model: type[BaseModel], nested: bool = False) -> tuple[tuple[str, Any], ...] | None:
    """(field, kind) of every field, in order, when an instance can be made from plain values
    without validation: no validators, aliases, defaults, private attributes or extra fields (a
    record inside the arguments may ignore extra keys: it is taken only with none)."""
    extra = model.model_config.get("extra")
    if not (extra == "forbid" or (nested and extra in (None, "ignore"))) or set(model.model_config) - {"extra", "title"}:
        return None
    decorators = model.__pydantic_decorators__
    if any(getattr(decorators, k) for k in ("validators", "field_validators", "root_validators", "model_validators",
                                           "field_serializers", "model_serializers", "computed_fields")):  # fmt: skip
        return None
    if model.__private_attributes__ or getattr(model, "__pydantic_root_model__", False):
        return None
    out = []
    for name, info in model.model_fields.items():
        kind = _kind(info.annotation, info.metadata)
        if kind is None or not info.is_required() or info.alias or info.validation_alias:
            return None
        out.append((name, kind))
    return tuple(out)


def _made(model: type[BaseModel], fields: tuple[tuple[str, Any], ...], given: dict[str, Any]) -> Any:
    """An instance of `model` from `given` (a value for every field, nothing else), when each value
    is of its field's own type (text in ASCII, a whole number below 2**63, a finite float where a
    number may be one, a text among a `Literal`'s): what strict validation of the JSON text
    returns, made without it. None otherwise."""
    if len(given) != len(fields):
        return None
    values = {}
    for name, kind in fields:
        value = given.get(name, _ABSENT)
        t = type(value)
        if t is str:
            if not value.isascii() or (kind != _TEXT and (type(kind) is not frozenset or value not in kind)):
                return None
        elif t is int:
            if (kind != _WHOLE and kind != _NUMBER) or not -_LIMIT < value < _LIMIT:
                return None
        elif t is float:
            if kind != _NUMBER or not math.isfinite(value):
                return None
        elif t is list:
            if kind == _TEXTS:
                if not all(type(v) is str and v.isascii() for v in value):
                    return None
                value = list(value)
            elif type(kind) is _Records:
                records = []
                for item in value:
                    record = _made(kind.model, kind.fields, item) if type(item) is dict else None
                    if record is None:
                        return None
                    records.append(record)
                value = records
            else:
                return None
        else:
            return None
        values[name] = value
    new = model.__new__(model)
    _set(new, "__dict__", values)
    _set(new, "__pydantic_fields_set__", set(values))
    _set(new, "__pydantic_extra__", None)
    _set(new, "__pydantic_private__", None)
    return new


class CallPlan:
    """What `execute` needs of one tool, worked out once: the tool, the toolkit its Python errors
    name, and how its argument model is made from plain values (`direct`)."""

    __slots__ = ("fields", "model", "read", "tool", "toolkit")

    def __init__(self, tool: Tool, toolkit: str) -> None:
        self.tool, self.toolkit, self.model = tool, toolkit, tool.args
        self.fields = _direct_fields(tool.args)
        self.read = tool.kind == "read"

    def direct(self, arguments: dict[str, Any]) -> Any:
        """The argument model made from plain values of the declared types (see `_made`), or
        None: take the JSON path."""
        if self.fields is None:
            return None
        return _made(self.model, self.fields, arguments)


_set = object.__setattr__


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
        # the tools' call plans, shared by every session of the domain (and of a copy of it with
        # the same tools)
        key = f"__call_plans__:{id(domain.tools)}:{id(domain.user_tools)}"
        self._plans: dict[tuple[str, str], CallPlan | None] = domain._cache.setdefault(key, {})
        self._reading = reading(self.db)

    def _plan(self, name: str, requestor: str) -> CallPlan | None:
        tool = self.domain.tool(name, requestor)
        toolkit = self.domain.user_toolkit if requestor == "user" else self.domain.toolkit
        plan = self._plans[(name, requestor)] = None if tool is None else CallPlan(tool, toolkit)
        return plan

    def execute(self, call: ToolCall) -> Outcome:
        requestor = "user" if call.requestor == "user" else "assistant"
        try:
            plan = self._plans[(call.name, requestor)]
        except KeyError:
            plan = self._plan(call.name, requestor)
        if plan is None:
            if requestor == "user" and not self.domain.user_tools:
                return Outcome("Error: user tools are not available in this domain", True)
            return Outcome(f"Error: Tool '{call.name}' not found.", True)
        tool = plan.tool
        args = plan.direct(call.arguments)
        if args is None:
            problem = call_problem(tool, call.arguments, plan.toolkit)
            if problem:
                return Outcome(f"Error: {problem}", True, tool=tool)
            try:
                args = validated(tool, call.arguments)
            except ValidationError as exc:
                lines = [
                    f"{'.'.join(str(x) for x in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()[:6]
                ]
                return refused(tool, lines)
        sync = self.domain.sync
        if not plan.read or sync is not None:
            self._digests = None
        try:
            if plan.read:
                with self._reading:
                    value = tool.run(self.db, args)
                    text = tool_text(value)
                    if sync is not None:  # the sync step after the call may change it
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
