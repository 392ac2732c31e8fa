"""Real τ²-bench results (tests/data/tau2_runs_sample) and variants of them in τ²-bench's other
shapes: the folder layout, solo mode, simulations without a task id."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "tests" / "data" / "tau2_runs_sample"


def sample_path(domain: str) -> Path:
    return SAMPLES / f"gpt-4.1_{domain}_sample.json"


def sample(domain: str) -> dict[str, Any]:
    return json.loads(sample_path(domain).read_text(encoding="utf-8"))


def write(data: dict[str, Any], path: Path) -> Path:
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def as_folder(data: dict[str, Any], folder: Path) -> Path:
    """τ²-bench's folder layout: results.json with a simulation_index, simulations/<id>.json."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "simulations").mkdir(exist_ok=True)
    meta = {k: v for k, v in data.items() if k != "simulations"}
    meta["simulation_index"] = [
        {"id": s["id"], "task_id": s["task_id"], "trial": s["trial"], "reward": s["reward_info"]["reward"]}
        for s in data["simulations"]
    ]
    write(meta, folder / "results.json")
    for s in data["simulations"]:
        write(s, folder / "simulations" / f"{s['id']}.json")
    return folder


def as_solo(data: dict[str, Any]) -> dict[str, Any]:
    """The same telecom runs as τ²-bench's solo mode records them: the agent makes the phone's
    calls itself (assistant messages, requestor assistant) and the dummy user never speaks."""
    data = copy.deepcopy(data)
    data["info"]["agent_info"]["implementation"] = "llm_agent_solo"
    data["info"]["user_info"]["implementation"] = "dummy_user"
    for sim in data["simulations"]:
        out = []
        for m in sim["messages"]:
            if m["role"] == "user":
                if not m.get("tool_calls"):
                    continue  # the dummy user says nothing
                m = {**m, "role": "assistant", "content": None}
                m["tool_calls"] = [{**c, "requestor": "assistant"} for c in m["tool_calls"]]
            elif m["role"] == "tool":
                m = {**m, "requestor": "assistant"}
            out.append(m)
        sim["messages"] = out
    return data
