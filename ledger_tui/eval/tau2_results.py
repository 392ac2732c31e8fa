"""Reading a τ²-bench results file as τ²-bench writes it, for `import-tau2` and `grade`.

- Layouts: one JSON file with the simulations inline (every release), or τ²-bench's folder layout
  (`results.json` with a `simulation_index`, each simulation in `simulations/<id>.json`), given as
  the folder or its `results.json`.
- Solo mode (`llm_agent_solo` with `dummy_user`, telecom `no-user` runs): the agent holds the phone's
  tools too, so its calls to phone tools act on the phone. `calls` maps them to the customer side.
- Who made a call is the role of the message that carries it, never a field of the call: a file
  cannot make an agent's call pass for the customer's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ledger_tui.engine.domain import Domain
from ledger_tui.engine.errors import LedgerTuiError
from ledger_tui.engine.events import ToolCall
from ledger_tui.engine.store.reading import brief, load_json, too_deep, words
from ledger_tui.engine.agents.tasks import parse_task

# τ²-bench's environment names → this project's domains
DOMAIN_NAMES = {"airline": "airline", "retail": "retail", "telecom": "telecom", "telecom-workflow": "telecom"}


class Tau2Error(LedgerTuiError):
    pass


@dataclass
class Results:
    path: Path
    domain_name: str  # as recorded (`telecom-workflow` stays itself)
    info: dict[str, Any]
    tasks: list[dict[str, Any]] | None  # None: the file carries no task definitions
    simulations: list[dict[str, Any]]
    solo: bool
    warnings: list[str] = field(default_factory=list)

    @property
    def domain(self) -> str:
        """This project's domain for the recorded environment."""
        return DOMAIN_NAMES[self.domain_name]

    @property
    def agent(self) -> str:
        agent_info = self.info.get("agent_info") or {}
        return str(agent_info.get("llm") or agent_info.get("implementation") or "unknown")


FIX = "pass the results file τ²-bench wrote"


def _load_json(path: Path, what: str) -> Any:
    return load_json(path, Tau2Error, f"pass a τ²-bench {what}")


# τ²-bench's shapes (its data_model/simulation.py and message.py), for the fields this project
# reads; unknown fields are kept. A file of another shape is one sentence naming the field.
class _Shape(BaseModel):
    model_config = ConfigDict(extra="allow")


class _Call(_Shape):
    id: str | None = None
    name: str
    arguments: dict[str, Any] | str | None = None


class _Message(_Shape):
    role: Literal["system", "assistant", "user", "tool"]
    content: str | None = None
    tool_calls: list[_Call] | None = None
    tool_messages: list["_Message"] | None = None
    turn_idx: int | None = None
    error: bool | None = None


class _DBCheck(_Shape):
    db_reward: float | None = None


class _RewardInfo(_Shape):
    reward: float
    db_check: _DBCheck | None = None
    env_assertions: list[dict[str, Any]] | None = None
    action_checks: list[dict[str, Any]] | None = None
    nl_assertions: list[dict[str, Any]] | None = None
    communicate_checks: list[dict[str, Any]] | None = None
    reward_basis: list[str] | None = None
    reward_breakdown: dict[str, float | None] | None = None


class _Simulation(_Shape):
    id: str | None = None
    task_id: str | None = None
    trial: int | None = None
    start_time: str | None = None
    termination_reason: str | None = None
    reward_info: _RewardInfo | None = None
    messages: list[_Message] | None = None


class _Implementation(_Shape):
    implementation: str | None = None
    llm: str | None = None


class _Environment(_Shape):
    domain_name: str | None = None


class _Info(_Shape):
    agent_info: _Implementation | None = None
    user_info: _Implementation | None = None
    environment_info: _Environment | None = None


class _Results(_Shape):
    info: _Info | None = None
    tasks: list[Any] | None = None
    simulations: list[Any] | None = None
    simulation_index: list[Any] | None = None


def _checked(model: type[BaseModel], raw: Any, source: str, where: str = "") -> dict[str, Any]:
    """`raw` as τ²-bench writes it (values of the types its models hold), else one sentence."""
    try:
        return model.model_validate(raw).model_dump(exclude_unset=True)
    except ValidationError as exc:
        raise Tau2Error(f"{source} is damaged: {words(exc, where)}; {FIX}.") from None


def _index_id(entry: Any, n: int, path: Path, folder: Path) -> str:
    """The simulation id of index entry `n` (a record with an `id`, or a bare id in early files),
    once it names a file inside `folder`: an id never leads out of it."""
    value = entry.get("id") if isinstance(entry, dict) else entry
    if not isinstance(value, str) or not value.strip():
        raise Tau2Error(f"simulation_index[{n}] of {path.name} has no simulation id (got {brief(value)}); {FIX}.")
    if "/" in value or "\\" in value or "\x00" in value or value in (".", "..") or not _inside(folder, f"{value}.json"):
        raise Tau2Error(
            f"simulation_index[{n}] of {path.name} names simulation {value[:60]!r}, which is not a file name in "
            f"{folder}; {FIX}."
        )
    return value


def _inside(folder: Path, name: str) -> bool:
    """`folder`/`name` is a file name of `folder` itself once resolved (no symlink leads out)."""
    try:
        return (folder / name).resolve().parent == folder.resolve()
    except (OSError, ValueError):  # a name too long for the file system
        return False


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # a name too long for the file system
        return False


def _indexed(path: Path, index: list[Any]) -> list[dict[str, Any]]:
    """The simulations of the folder layout, in index order."""
    folder = path.parent / "simulations"
    if not folder.is_dir():
        raise Tau2Error(
            f"{path.name} lists {len(index)} simulations in simulation_index but {folder} is missing; "
            "keep the simulations/ folder next to results.json."
        )
    ids = [_index_id(e, n, path, folder) for n, e in enumerate(index)]
    missing = [i for i in ids if not _is_file(folder / f"{i}.json")]
    if missing:
        raise Tau2Error(
            f"{len(missing)} of the {len(ids)} simulations indexed in {path.name} have no file in {folder} "
            f"(first: {missing[0]}.json); copy the whole results folder."
        )
    return [
        _checked(_Simulation, _load_json(folder / f"{i}.json", "simulation file"), f"simulations/{i}.json")
        for i in ids
    ]


def solo_mode(info: dict[str, Any]) -> bool:
    """τ²-bench's rule: a solo agent with the dummy user (the user side never speaks)."""
    agent = str((info.get("agent_info") or {}).get("implementation") or "")
    user = str((info.get("user_info") or {}).get("implementation") or "")
    return "solo" in agent or user == "dummy_user"


def read_results(path: Path | str) -> Results:
    """A results file (or folder) checked for what grading and import need, in one sentence if
    not: every field this project reads has the type τ²-bench writes, before anything is done."""
    path = Path(path)
    if path.is_dir():
        if not (path / "results.json").is_file():
            raise Tau2Error(f"{path} has no results.json; pass a τ²-bench results.json or the folder that holds it.")
        path = path / "results.json"
    data = _load_json(path, "results.json")
    if not isinstance(data, dict) or not ("simulations" in data or "simulation_index" in data):
        raise Tau2Error(
            f"{path.name} has no \"simulations\"; pass a τ²-bench results.json (or its folder's results.json)."
        )
    top = _checked(_Results, data, path.name)
    info = top.get("info") or {}
    env_name = (info.get("environment_info") or {}).get("domain_name")
    if env_name not in DOMAIN_NAMES:
        raise Tau2Error(
            f"{path.name} is for domain {env_name!r}; ledger-tui reads airline, retail and telecom runs."
        )
    raw = top.get("simulations") or []
    if raw:
        simulations = [_checked(_Simulation, s, path.name, f"simulations[{n}]") for n, s in enumerate(raw)]
    elif top.get("simulation_index"):
        simulations = _indexed(path, top["simulation_index"])
    else:
        simulations = []
    tasks = top.get("tasks")
    for n, t in enumerate(tasks or [], 1):
        parse_task(t, n, path.name)
    results = Results(path, env_name, info, tasks if tasks else None, simulations, solo_mode(info))
    no_id = sum(1 for s in simulations if s.get("task_id") in (None, ""))
    if no_id:
        results.warnings.append(
            f"{no_id} of {len(simulations)} simulations have no task_id; they are listed as unknown task."
        )
    no_messages = sum(1 for s in simulations if not isinstance(s.get("messages"), list))
    if no_messages:
        results.warnings.append(
            f"{no_messages} of {len(simulations)} simulations have no messages (full-duplex runs keep them in "
            "ticks, which are not read); they are read as empty conversations."
        )
    return results


def messages(sim: dict[str, Any]) -> list[dict[str, Any]]:
    """A simulation's messages, with wrapped tool messages (`tool_messages`) flattened."""
    out: list[dict[str, Any]] = []
    for m in sim.get("messages") or []:
        if not isinstance(m, dict):
            continue
        if m.get("role") == "tool" and m.get("tool_messages"):
            out.extend(t for t in m["tool_messages"] if isinstance(t, dict))
        else:
            out.append(m)
    return out


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, str):
        if too_deep(raw) is not None:
            return {}
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except (ValueError, RecursionError):
            return {}
    return raw if isinstance(raw, dict) else {}


def calls(message: dict[str, Any], domain: Domain, solo: bool) -> list[ToolCall]:
    """The tool calls a message carries. The caller is the message's role; in solo mode an agent's
    call to one of the phone's tools is the phone's (τ²-bench routes it to the user toolkit)."""
    role = message.get("role")
    out = []
    for i, c in enumerate(message.get("tool_calls") or []):
        if not isinstance(c, dict):
            continue
        name = str(c.get("name") or "")
        requestor = "user" if role == "user" else "assistant"
        if requestor == "assistant" and solo and domain.tool(name, "user") is not None:  # the phone's tool wins, as in τ²-bench
            requestor = "user"
        out.append(
            ToolCall(
                id=str(c.get("id") or f"{role}_{message.get('turn_idx', 0)}_{i}"),
                name=name,
                arguments=_arguments(c.get("arguments")),
                requestor=requestor,  # type: ignore[arg-type]
            )
        )
    return out


def paired(msgs: list[dict[str, Any]], domain: Domain, solo: bool) -> Iterator[tuple[dict[str, Any], list[tuple[ToolCall, dict[str, Any] | None]]]]:
    """Each user or assistant message with its calls, each call paired by position with the tool
    message that follows it (None when the recording has none)."""
    i = 0
    while i < len(msgs):
        m = msgs[i]
        i += 1
        if m.get("role") not in ("user", "assistant"):
            continue
        pairs: list[tuple[ToolCall, dict[str, Any] | None]] = []
        for call in calls(m, domain, solo):
            result = msgs[i] if i < len(msgs) and msgs[i].get("role") == "tool" else None
            if result is not None:
                i += 1
            pairs.append((call, result))
        yield m, pairs
