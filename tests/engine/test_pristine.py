"""No write of any session changes what every other session starts from.

Sessions share one validated copy of a domain's database (copy-on-write, `engine/store/cow.py`): writes
look at shared records and copy only what they change. Here every write tool of every domain (and
the generic tools, and telecom's phone tools) runs in many ways: each task's gold actions in order
in one session (so later writes find records an earlier one copied, whole or in part), the same
calls with arguments swapped between calls, unknown, or of the wrong type (failing at every check
the tools make), and each gold write with a failure injected before its 1st, 2nd, … change (a write
that raises midway). After every call the shared database must equal a freshly loaded one, value for
value, and at the end of each domain its digest must too, as must a new session's.
"""

from __future__ import annotations

import itertools
import json
import random
from typing import Any, Iterator

import pytest

from ledger_tui.domains import load_domain
from ledger_tui.engine.store import cow
from ledger_tui.engine.store.cow import CowRecords, SharedRecordChanged
from ledger_tui.engine.environment import Environment
from ledger_tui.engine.events import ToolCall
from ledger_tui.engine.agents.gold import fresh_environment
from ledger_tui.engine.store.serialize import digest
from ledger_tui.engine.agents.tasks import load_tasks

COW_DOMAINS = ("airline", "retail", "telehealth")
WRONG = (None, "x", 7, 2.5, True, [], {}, ["a"], {"k": "v"})


def pristine_of(domain: Any) -> Any:
    Environment(domain)  # makes sure the shared copy exists
    entries = [v for k, v in domain._cache.items() if k.startswith("pristine:")]
    assert len(entries) == 1
    return entries[0][0]


def gold_runs(domain: Any) -> Iterator[tuple[Any, list[ToolCall]]]:
    for task in load_tasks(domain.tasks_path):
        calls = [
            ToolCall(id=f"g{i}", name=a.name, arguments=a.arguments, requestor=a.requestor)  # type: ignore[arg-type]
            for i, a in enumerate(task.gold_actions)
        ]
        yield task, calls


def changes(domain: Any, call: ToolCall) -> bool:
    return domain.kind(call.name, call.requestor) != "read"


def variants(domain: Any, call: ToolCall, examples: dict[str, list[Any]], rnd: random.Random) -> Iterator[dict[str, Any]]:
    """The call's arguments with one argument swapped for another call's, made unknown or of the
    wrong type, or dropped; a booking also pays twice with the same method (fails after a debit)."""
    args = call.arguments
    for name, value in args.items():
        others = [v for v in examples.get(name, []) if v != value]
        if others:
            yield {**args, name: rnd.choice(others)}
        if isinstance(value, str):
            yield {**args, name: value + "9Z"}
        yield {**args, name: rnd.choice(WRONG)}
        if isinstance(value, list) and value:
            yield {**args, name: value + value[:1]}
            yield {**args, name: value[:-1]}
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            yield {**args, name: value + 1000}
    if args:
        yield {k: v for k, v in args.items() if k != next(iter(args))}


class Injected(RuntimeError):
    pass


def inject_failure(monkeypatch: pytest.MonkeyPatch, at: int) -> None:
    """Make the `at`-th step that changes a session's records (a private copy taken, a part of a
    record copied, a record set or deleted) raise, so a write stops midway."""
    count = itertools.count(1)

    def wrap(method: Any) -> Any:
        def wrapped(self: CowRecords, *args: Any, **kwargs: Any) -> Any:
            if not self._reading and next(count) == at:
                raise Injected(f"injected failure before change {at}")
            return method(self, *args, **kwargs)

        return wrapped

    for name in ("__getitem__", "__setitem__", "__delitem__", "edit"):
        monkeypatch.setattr(CowRecords, name, wrap(getattr(CowRecords, name)))


@pytest.mark.parametrize("name", COW_DOMAINS)
def test_no_write_changes_the_shared_database(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    domain = load_domain(name)
    pristine = pristine_of(domain)
    fresh = domain.load_db()
    fresh_json, fresh_digest = fresh.model_dump_json(), digest(fresh)
    checked: dict[str, int] = {}

    def check(call: ToolCall, how: str) -> None:
        assert pristine.model_dump_json() == fresh_json, f"{how} {call.name}({json.dumps(call.arguments)}) changed the shared database"
        checked[call.name] = checked.get(call.name, 0) + 1

    rnd = random.Random(f"pristine/{name}")
    examples: dict[str, list[Any]] = {}
    runs = list(gold_runs(domain))
    for _, calls in runs:
        for call in calls:
            for k, v in call.arguments.items():
                examples.setdefault(k, []).append(v)

    # each task's gold actions in order, in one session; then variants of each write, in the state
    # the task had reached before it
    for task, calls in runs:
        env = fresh_environment(domain, task)
        for i, call in enumerate(calls):
            outcome = env.execute(call)
            assert "shared by every session" not in outcome.content, outcome.content
            if changes(domain, call):
                check(call, "gold")
                for arguments in itertools.islice(variants(domain, call, examples, rnd), 12):
                    other = fresh_environment(domain, task)
                    for before in calls[:i]:
                        other.execute(before)
                    mutated = call.model_copy(update={"arguments": arguments})
                    outcome = other.execute(mutated)
                    assert "shared by every session" not in outcome.content, outcome.content
                    check(mutated, "variant of")

    # every gold write, stopped before each of its changes in turn
    seen: set[str] = set()
    for task, calls in runs:
        for i, call in enumerate(calls):
            if not changes(domain, call) or json.dumps([call.name, call.arguments]) in seen:
                continue
            seen.add(json.dumps([call.name, call.arguments]))
            for at in range(1, 6):
                env = fresh_environment(domain, task)
                for before in calls[:i]:
                    env.execute(before)
                with monkeypatch.context() as patch:
                    inject_failure(patch, at)
                    outcome = env.execute(call)
                check(call, f"injected failure {at} in")
                if not outcome.error:
                    break  # the write made fewer changes than `at`: it completed

    writes = {t.name for t in domain.tools if t.kind == "write"}
    assert writes <= set(checked), f"not exercised: {writes - set(checked)}"
    assert digest(pristine) == fresh_digest
    assert Environment(domain).digests()[0] == fresh_digest
    assert pristine.model_dump() == domain.load_db().model_dump()


def test_telecom_writes_and_phone_actions_leave_new_sessions_as_shipped() -> None:
    """Telecom sessions validate their own copy from the parsed files; no call, of the agent or on
    the customer's phone, may change those or anything a new session starts from."""
    from ledger_tui.domains.telecom import state

    domain = load_domain("telecom")
    first = Environment(domain)
    raw_before = json.dumps(state._RAW, sort_keys=True, default=str)
    digests_before = first.digests()
    task_digests: dict[str, tuple[str, str | None]] = {}
    runs = list(gold_runs(domain))
    for task, _ in runs:
        task_digests[task.id] = fresh_environment(domain, task).digests()
    examples: dict[str, list[Any]] = {}
    for _, calls in runs:
        for call in calls:
            for k, v in call.arguments.items():
                examples.setdefault(k, []).append(v)
    rnd = random.Random("pristine/telecom")

    def check(call: ToolCall) -> None:
        assert json.dumps(state._RAW, sort_keys=True, default=str) == raw_before, call.name
        assert Environment(domain).digests() == digests_before, call.name

    called: set[tuple[str, str]] = set()
    for task, calls in runs:
        env = fresh_environment(domain, task)
        for call in calls:
            env.execute(call)
            if changes(domain, call):
                called.add((call.requestor, call.name))
                check(call)
                for arguments in itertools.islice(variants(domain, call, examples, rnd), 6):
                    fresh_environment(domain, task).execute(call.model_copy(update={"arguments": arguments}))
                    check(call)
        # every phone action, in this task's state, after its gold actions
        for tool in domain.user_tools:
            arguments = {f: (examples.get(f) or ["messaging"])[0] for f in tool.args.model_fields}
            env.execute(ToolCall(id="u", name=tool.name, arguments=arguments, requestor="user"))
            called.add(("user", tool.name))
        check(ToolCall(id="u", name="phone actions", arguments={}))
        assert fresh_environment(domain, task).digests() == task_digests[task.id], task.id
    agent_writes = {("assistant", t.name) for t in domain.tools if t.kind == "write"}
    assert agent_writes <= called, agent_writes - called
    assert {("user", t.name) for t in domain.user_tools} <= called


def test_a_shared_record_cannot_be_changed_by_mistake() -> None:
    """Looking a record up for reading hands out the shared one: any change to it is refused (the
    call fails with a message) instead of reaching every session."""
    domain = load_domain("airline")
    env = Environment(domain)
    rid = next(iter(env.db.reservations))
    shared = cow.look(env.db.reservations, rid)
    for change in (
        lambda: setattr(shared, "status", "cancelled"),
        lambda: shared.payment_history.append(None),
        lambda: shared.flights[0].__setattr__("price", 1),
        lambda: shared.passengers.__setitem__(0, None),
        lambda: cow.look(env.db.users, shared.user_id).payment_methods.pop(next(iter(
            cow.look(env.db.users, shared.user_id).payment_methods))),
    ):
        with pytest.raises(SharedRecordChanged):
            change()
    mine = env.db.reservations[rid]  # a private copy: changes freely
    mine.status = "cancelled"
    mine.payment_history.append(mine.payment_history[0].model_copy(update={"amount": -1}))
    assert cow.look(env.db.reservations, rid) is mine
    assert Environment(domain).db.reservations[rid].status is None
