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
from typing import Any

from ledger_tui.engine.domain import Domain
from ledger_tui.engine.errors import LedgerTuiError
from ledger_tui.engine.events import ToolCall

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


def _load_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise Tau2Error(f"{path} does not exist; pass a τ²-bench {what}.") from None
    except IsADirectoryError:
        raise Tau2Error(f"{path} is a folder; pass a τ²-bench {what}.") from None
    except UnicodeDecodeError:
        raise Tau2Error(f"{path} is not a text file; pass a τ²-bench {what}.") from None
    except json.JSONDecodeError as exc:
        raise Tau2Error(f"{path} is not valid JSON (line {exc.lineno}); pass a τ²-bench {what}.") from None


def _indexed(path: Path, index: list[Any]) -> list[dict[str, Any]]:
    """The simulations of the folder layout, in index order (entries are records with an `id`,
    or bare ids in early files)."""
    folder = path.parent / "simulations"
    if not folder.is_dir():
        raise Tau2Error(
            f"{path.name} lists {len(index)} simulations in simulation_index but {folder} is missing; "
            "keep the simulations/ folder next to results.json."
        )
    ids = [str(e.get("id") if isinstance(e, dict) else e) for e in index]
    missing = [i for i in ids if not (folder / f"{i}.json").is_file()]
    if missing:
        raise Tau2Error(
            f"{len(missing)} of the {len(ids)} simulations indexed in {path.name} have no file in {folder} "
            f"(first: {missing[0]}.json); copy the whole results folder."
        )
    return [_load_json(folder / f"{i}.json", "simulation file") for i in ids]


def solo_mode(info: dict[str, Any]) -> bool:
    """τ²-bench's rule: a solo agent with the dummy user (the user side never speaks)."""
    agent = str((info.get("agent_info") or {}).get("implementation") or "")
    user = str((info.get("user_info") or {}).get("implementation") or "")
    return "solo" in agent or user == "dummy_user"


def read_results(path: Path | str) -> Results:
    """A results file (or folder) checked for what grading and import need, in one sentence if not."""
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
    info = data.get("info") if isinstance(data.get("info"), dict) else {}
    env_name = (info.get("environment_info") or {}).get("domain_name")
    if env_name not in DOMAIN_NAMES:
        raise Tau2Error(
            f"{path.name} is for domain {env_name!r}; ledger-tui reads airline, retail and telecom runs."
        )
    simulations = data.get("simulations") or []
    if not simulations and data.get("simulation_index"):
        simulations = _indexed(path, data["simulation_index"])
    if not isinstance(simulations, list) or not all(isinstance(s, dict) for s in simulations):
        raise Tau2Error(f"{path.name}'s \"simulations\" is not a list of simulations; pass a τ²-bench results.json.")
    tasks = data.get("tasks")
    results = Results(path, env_name, info, tasks if isinstance(tasks, list) and tasks else None, simulations, solo_mode(info))
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
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except ValueError:
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
