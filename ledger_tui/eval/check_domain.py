"""The domain linter behind `ledger-tui check-domain`: do the parts of a domain folder agree?

A domain is written in several places that must match and nothing else checks that they do: the
clauses tagged in `policy.md`, the predicates that name them, the path map of every read, the paths
and proposal `Terms` of every write, the tool argument models and the database schema. Each check
here reads the built `Domain` (nothing is inferred from file layout), and `cases.json` beside the
policy is run through the real gate: one call per predicate that must pass it and one that must
fail it with the stated verdict.

A finding is one line, `domain: check: what is wrong — how to fix`.
"""

from __future__ import annotations

import json
import re
import string
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from ledger_tui.engine.conversation.consent import Terms
from ledger_tui.engine.domain import Domain, Tool
from ledger_tui.engine.events import PredicateResult, ToolCall
from ledger_tui.engine.gate import GateContext, MissingEvidence, evaluate
from ledger_tui.testing import Probe

CASES_FILE = "cases.json"
# a clause tag in policy.md: a bullet or paragraph that starts with **[clause.id]**
CLAUSE_TAG = re.compile(r"\*\*\[([^\]\s]+)\]\*\*")
# an argument that names a record by its id: `reservation_id`, `item_ids`
ID_ARGUMENT = re.compile(r"^(?P<stem>[a-z][a-z0-9_]*?)_ids?$")


@dataclass(frozen=True)
class Finding:
    domain: str
    check: str
    problem: str
    fix: str

    def line(self) -> str:
        return f"{self.domain}: {self.check}: {self.problem} — {self.fix}"


# ----------------------------------------------------------------------------- cases.json
class Step(BaseModel):
    """One thing that happens before the call: the customer says, the agent says, a read or a
    write runs on the domain's database (reads are absorbed into the ledger, writes mark stale)."""

    model_config = ConfigDict(extra="forbid")
    say: str | None = None
    agent: str | None = None
    read: str | None = None
    write: str | None = None
    arguments: dict[str, Any] = {}
    requestor: Literal["assistant", "user"] = "assistant"

    @model_validator(mode="after")
    def _one_kind(self) -> "Step":
        given = [k for k in ("say", "agent", "read", "write") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("a step is exactly one of say, agent, read, write")
        return self

    def words(self) -> str:
        if self.say is not None:
            return f"say {self.say[:40]!r}"
        if self.agent is not None:
            return f"agent {self.agent[:40]!r}"
        return f"{'read' if self.read else 'write'} {self.read or self.write}({json.dumps(self.arguments)[1:-1]})"


class Call(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    arguments: dict[str, Any] = {}


class Case(BaseModel):
    """A call the named predicate must pass ("pass") or fail with this verdict."""

    model_config = ConfigDict(extra="forbid")
    predicate: str
    expect: Literal["pass", "REVISE", "BLOCK"]
    about: str = ""
    # τ²-bench's initial_state (initialization_data / initialization_actions), applied to a fresh
    # database by the domain's `init_task` before the steps
    initial_state: dict[str, Any] | None = None
    steps: list[Step] = []
    call: Call


class CaseFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    about: str = ""
    cases: list[Case]


@dataclass
class CaseRun:
    """What one case did: the named predicate's result (None: it did not run), or why it could not
    be set up; and the proposal terms of the call, when it is a write."""

    case: Case
    result: PredicateResult | None = None
    problem: str | None = None
    terms: str | None = None  # "ok", or what went wrong building them; None: not a write / unknown


def load_cases(path: Path) -> CaseFile:
    """The case file; ValueError with one sentence if it cannot be read."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path.name} cannot be read ({exc})") from None
    try:
        return CaseFile.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise ValueError(f"{path.name} does not match the case format ({where}: {first['msg']})") from None


def run_case(domain: Domain, case: Case) -> CaseRun:
    """Set up the case's database and ledger with a `Probe`, then ask the real gate about the call."""
    run = CaseRun(case)
    db = None
    if case.initial_state is not None:
        if domain.init_task is None:
            run.problem = "it gives an initial_state but the domain has no init_task to apply it"
            return run
        db = domain.load_db()
        domain.init_task(db, case.initial_state)
    probe = Probe(domain, db=db)
    for i, step in enumerate(case.steps, 1):
        if step.say is not None:
            probe.say(step.say)
        elif step.agent is not None:
            probe.agent_says(step.agent)
        else:
            name = step.read or step.write or ""
            tool = domain.tool(name, step.requestor if step.write else "assistant")
            wanted = "read" if step.read else "write"
            if tool is None or (tool.kind != wanted and not (wanted == "write" and tool.kind == "generic")):
                run.problem = f"step {i} ({step.words()}) names no {wanted} tool of the domain"
                return run
            outcome = (probe.read(name, **step.arguments) if step.read else probe.write(name, step.requestor, **step.arguments))
            if outcome.error:
                run.problem = f"step {i} ({step.words()}) answered an error: {str(outcome.content)[:120]}"
                return run
    call = ToolCall(id="check-domain", name=case.call.name, arguments=case.call.arguments)
    decision = evaluate(call, domain, probe.ledger, probe.context())
    run.result = next((r for r in decision.predicates if r.name == case.predicate), None)
    tool = domain.tool(case.call.name)
    if tool is not None and tool.kind == "write" and domain.proposal_terms is not None:
        run.terms = _terms(domain, tool, call, probe)
    return run


def _terms(domain: Domain, tool: Tool, call: ToolCall, probe: Probe) -> str:
    try:
        args = tool.args.model_validate(call.arguments)
        ctx = GateContext(call=call, args=args, ledger=probe.ledger, session=probe.context(), domain=domain)
        terms = domain.proposal_terms(ctx)  # type: ignore[misc]
    except (MissingEvidence, ValidationError):
        return "missing"  # the case's ledger lacks what the terms read: says nothing about the terms
    except Exception as exc:  # noqa: BLE001  the linter reports it
        return f"{type(exc).__name__}: {exc}"
    return "ok" if isinstance(terms, Terms) else f"it returned {type(terms).__name__}, not Terms"


def _verdict_of(run: CaseRun) -> str:
    r = run.result
    if r is None:
        return "did not run"
    if r.error:
        return "raised"
    return "pass" if r.passed else r.verdict_on_fail.value


# ----------------------------------------------------------------------------- the checks
def policy_clauses(policy: str) -> list[str]:
    """Every clause id tagged in the policy, in order (duplicates kept)."""
    return CLAUSE_TAG.findall(policy)


def _placeholders(template: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(template) if field}


def _argument_names(tool: Tool) -> set[str]:
    return set(tool.args.model_fields)


def _walk_schema(model: type[BaseModel]) -> tuple[set[str], set[str]]:
    """(every field name, the names of fields that hold collections: maps and lists of records)
    of a pydantic model and of every model reachable from it."""
    fields: set[str] = set()
    collections: set[str] = set()
    seen: set[type] = set()

    def models_in(annotation: Any) -> Iterable[type[BaseModel]]:
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            yield annotation
        for arg in typing.get_args(annotation):
            yield from models_in(arg)

    def is_collection(annotation: Any) -> bool:
        origin = typing.get_origin(annotation)
        if origin in (typing.Union, types.UnionType):
            return any(is_collection(a) for a in typing.get_args(annotation))
        return origin in (dict, list) and any(True for _ in models_in(annotation))

    stack = [model]
    while stack:
        m = stack.pop()
        if m in seen:
            continue
        seen.add(m)
        for name, info in m.model_fields.items():
            fields.add(name)
            if is_collection(info.annotation):
                collections.add(name)
            stack.extend(models_in(info.annotation))
    return fields, collections


def _policy(domain: Domain) -> str | None:
    try:
        return domain.policy
    except (OSError, UnicodeDecodeError):
        return None


def _plurals(stem: str) -> set[str]:
    out = {stem, stem + "s", stem + "es"}
    if stem.endswith("y"):
        out.add(stem[:-1] + "ies")
    return out


class _Linter:
    def __init__(self, domain: Domain, not_gated: dict[str, str] | None) -> None:
        self.domain = domain
        self.not_gated = dict(domain.not_gated if not_gated is None else not_gated)
        self.findings: list[Finding] = []
        self.policy = _policy(domain)
        if self.policy is None:
            self.add("clauses", f"{domain.policy_path} cannot be read", "write the policy the agent reads, each enforced clause tagged **[clause.id]**")
            self.policy = ""

    def add(self, check: str, problem: str, fix: str) -> None:
        self.findings.append(Finding(self.domain.name, check, problem, fix))

    # -------------------------------------------------------------- clauses and predicates
    def clauses(self) -> None:
        d = self.domain
        tagged = policy_clauses(self.policy)
        for clause in sorted({c for c in tagged if tagged.count(c) > 1}):
            self.add("clauses", f"policy.md tags [{clause}] {tagged.count(clause)} times", "tag each clause once; give the others their own ids")
        enforcers: dict[str, list[str]] = {}
        for p in d.predicates:
            enforcers.setdefault(p.clause, []).append(p.name)
        if d.read_gate is not None:
            enforcers.setdefault(d.read_gate.clause, []).append("the read gate")
        for clause in dict.fromkeys(tagged):
            if clause not in enforcers and clause not in self.not_gated:
                self.add(
                    "clauses",
                    f"policy clause [{clause}] is enforced by no predicate and not declared NOT_GATED",
                    f'add a predicate with clause="{clause}", or list it in NOT_GATED (predicates.py) with why the gate cannot enforce it',
                )
        for clause, why in self.not_gated.items():
            if clause not in tagged:
                self.add("clauses", f"NOT_GATED lists [{clause}], which policy.md does not tag", f"tag its bullet **[{clause}]** in policy.md, or remove it from NOT_GATED")
            elif clause in enforcers:
                self.add("clauses", f"NOT_GATED lists [{clause}], but {', '.join(enforcers[clause])} enforces it", "remove it from NOT_GATED")
            if not str(why).strip():
                self.add("clauses", f"NOT_GATED gives no reason for [{clause}]", "say in a sentence why the gate cannot enforce it")

    def predicates(self) -> None:
        d = self.domain
        tagged = set(policy_clauses(self.policy))
        names = [p.name for p in d.predicates]
        for name in sorted({n for n in names if names.count(n) > 1}):
            self.add("predicates", f"{names.count(name)} predicates are named {name}", "give each predicate its own name (evidence and cases.json refer to it)")
        for p in d.predicates:
            if p.clause not in tagged:
                self.add("predicates", f"predicate {p.name} names clause [{p.clause}], which policy.md does not tag", f"tag the clause's bullet **[{p.clause}]** in policy.md, or fix clause= of {p.name}")
            for tool_name in sorted(p.tools or ()):
                tool = d.tool(tool_name)
                if tool is None:
                    self.add("predicates", f"predicate {p.name} guards {tool_name}, which is not a tool of the domain", f"fix tools= of {p.name} (see `ledger-tui domains` for the tool names)")
                    continue
        if d.read_gate is not None and d.read_gate.clause not in tagged:
            self.add("predicates", f"the read gate names clause [{d.read_gate.clause}], which policy.md does not tag", "tag the privacy clause in policy.md, or fix the read gate's clause in paths.py")

    # -------------------------------------------------------------- reads and writes
    def tools(self) -> None:
        d = self.domain
        for tool in d.tools:
            if tool.kind == "read" and tool.absorbs is None:
                self.add("path-map", f"read tool {tool.name} has no path map", "give it absorbs= yielding its (path, value) pairs (a lookup that only identifies yields none)")
            if tool.kind == "write":
                if not callable(tool.touches) and not tool.touches:
                    self.add("touches", f"write {tool.name} declares no paths it touches", f"set touches= to the path templates {tool.name} makes stale, e.g. (\"orders.{{order_id}}\",)")
                for template in () if callable(tool.touches) else tool.touches:
                    missing = _placeholders(template) - _argument_names(tool)
                    if missing:
                        self.add("touches", f"write {tool.name} touches {template}, but has no argument {', '.join(sorted(missing))}", "name the write's own arguments in the template")
                if d.proposal_terms is None:
                    self.add("terms", f"write {tool.name} has no proposal Terms (the domain sets no proposal_terms)", "write proposals.terms(ctx) returning Terms for each write and pass it to Domain(proposal_terms=)")
        for pattern, tool_name in d.sources:
            tool = d.tool(tool_name)
            if tool is None or tool.kind != "read":
                self.add("path-map", f"SOURCES sends {pattern} to {tool_name}, which is not a read tool of the domain", "name the read tool that supplies the path")
                continue
            missing = _placeholders(pattern) - _argument_names(tool)
            if missing:
                self.add("path-map", f"SOURCES pattern {pattern} names {', '.join(sorted(missing))}, which {tool_name} does not take", f"use {tool_name}'s argument names in the pattern")

    def schema(self) -> None:
        """Every id argument of an agent tool names something of the database model: a collection
        (`reservation_id` → `reservations`) or a record's id field (`item_id`)."""
        d = self.domain
        fields, collections = _walk_schema(d.db_model)
        for tool in d.tools:
            for arg in sorted(_argument_names(tool)):
                m = ID_ARGUMENT.match(arg)
                if m is None:
                    continue
                stem = m.group("stem")
                # a qualified id names its record by the last words: new_item_ids → item
                words = stem.split("_")
                stems = ["_".join(words[i:]) for i in range(len(words))]
                if any(f"{s}_id" in fields or _plurals(s) & collections for s in stems):
                    continue
                self.add(
                    "schema",
                    f"{tool.name}'s argument {arg} names no collection or record id of {d.db_model.__name__}",
                    f"name the argument after the collection it keys (e.g. {stem}s → {stem}_id), or add that collection to schema.py",
                )
        for pattern, id_field in d.keyed:
            unknown = [part for part in pattern.split(".") if part != "*" and part not in fields]
            if unknown or id_field not in fields:
                self.add("schema", f"KEYED names {pattern} / {id_field}, which {d.db_model.__name__} does not have", "fix KEYED in schema.py to name the model's fields")

    # -------------------------------------------------------------- cases.json
    def cases(self) -> None:
        d = self.domain
        path = d.folder / CASES_FILE
        if not path.exists():
            self.add("cases", f"{path} does not exist", "write it: a passing and a failing call per predicate (see README, \"Adding a domain\")")
            return
        try:
            cases = load_cases(path).cases
        except ValueError as exc:
            self.add("cases", str(exc), "fix the file (see README, \"Adding a domain\", for the format)")
            return
        by_name = {p.name: p for p in d.predicates}
        covered: dict[str, set[str]] = {}
        terms: dict[str, list[str]] = {}
        for i, case in enumerate(cases, 1):
            label = f"case {i} ({case.predicate}, expect {case.expect})"
            if case.predicate not in by_name:
                self.add("cases", f"{label} names no predicate of the domain", "name one of the domain's predicates")
                continue
            try:
                run = run_case(d, case)
            except Exception as exc:  # noqa: BLE001  a case that cannot be set up is a finding
                self.add("cases", f"{label}: setting it up raised {type(exc).__name__}: {exc}", "fix the case's initial_state or steps")
                continue
            if run.terms is not None:
                terms.setdefault(case.call.name, []).append(run.terms)
            if run.problem is not None:
                self.add("cases", f"{label}: {run.problem}", "fix the case's steps")
                continue
            got = _verdict_of(run)
            if got == "did not run":
                self.add("cases", f"{label}: {case.predicate} did not run on {case.call.name} (not a tool it guards, or the gate refused the call first)", "call a tool the predicate guards, with valid arguments")
                continue
            if got == "raised":
                self.add("cases", f"{label}: {case.predicate} raised ({run.result.reason if run.result else ''})", "fix the predicate or the case's ledger")
                continue
            if got != case.expect:
                said = f" ({run.result.reason})" if run.result is not None and run.result.reason else ""
                self.add("cases", f"{label}: the gate's verdict is {got}{said}", "fix the case, or the predicate if the case is right")
                continue
            covered.setdefault(case.predicate, set()).add("pass" if got == "pass" else "fail")
        for p in d.predicates:
            have = covered.get(p.name, set())
            for kind in ("pass", "fail"):
                if kind not in have:
                    self.add("cases", f"no {'passing' if kind == 'pass' else 'failing'} case for predicate {p.name} agrees with the gate", f"add one to {CASES_FILE}: a call {p.name} {'passes' if kind == 'pass' else 'fails'}")
        for tool in d.tools:
            if tool.kind != "write" or d.proposal_terms is None:
                continue
            got_terms = terms.get(tool.name, [])
            if "ok" in got_terms:
                continue
            errors = [t for t in got_terms if t != "missing"]
            if errors:
                self.add("terms", f"proposal Terms of {tool.name} fail: {errors[0]}", f"make proposals.terms(ctx) return Terms for {tool.name}")
            elif got_terms:
                self.add("terms", f"no case's ledger holds what the proposal Terms of {tool.name} read", f"add a case calling {tool.name} after the reads its proposal names")
            else:
                self.add("terms", f"no case calls {tool.name}, so its proposal Terms are not checked", f"add a case for one of {tool.name}'s predicates (explicit confirmation)")


def check_domain(domain: Domain, not_gated: dict[str, str] | None = None) -> list[Finding]:
    """Every finding for the domain, in the order of the checks (none: the parts agree).
    `not_gated` replaces the domain's declared `not_gated` clauses (for tests)."""
    linter = _Linter(domain, not_gated)
    linter.clauses()
    linter.predicates()
    linter.tools()
    linter.schema()
    linter.cases()
    return linter.findings


def summary(domain: Domain, findings: list[Finding]) -> str:
    """The last line: what was checked, and how many findings."""
    from ledger_tui.explain import plural

    path = domain.folder / CASES_FILE
    try:
        n = len(load_cases(path).cases)
    except ValueError:
        n = 0
    policy = _policy(domain) or ""
    checked = (
        f"{plural(len(set(policy_clauses(policy))), 'clause')}, {plural(len(domain.predicates), 'predicate')}, "
        f"{plural(len(domain.tools), 'tool')}, {plural(n, 'case')}"
    )
    if not findings:
        return f"{domain.name}: ok ({checked})"
    return f"{domain.name}: {plural(len(findings), 'finding')} ({checked})"
