"""Every reader against every input: the generators and the contract, shared by the CI slice
(tests/engine/test_fuzz_readers.py, derandomized) and the long run (benchmarks/fuzz_readers.py).

The contract (issue 13): a reader given any bytes either returns, or raises the project's
`LedgerTuiError` with one line that names what is wrong in words — never another exception, never
a validator's dump ("validation error for", "errors.pydantic.dev", "tagged-union"). A reader that
writes (import-tau2) writes nothing when it refuses, and what it writes reads back.

Inputs are built per format from real documents (shipped sessions, scripts, databases, task files,
τ²-bench's own results, eval's results.jsonl) with one to three mutations each — a field removed,
renamed or retyped, a value swapped for another of the document's values, text an attacker would
write, nesting far past the limit — then serialized and sometimes damaged as bytes (cut short, a
Latin-1 byte, a byte-order mark, garbage after it); and raw bytes. Each reader is a `Reader`:
a name, a hypothesis strategy of inputs, and `run(input, folder)`.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from hypothesis import strategies as st

from ledger_tui.engine.errors import LedgerTuiError

ROOT = Path(__file__).resolve().parents[1]
SESSIONS = sorted((ROOT / "sessions").glob("*.jsonl"))
SCRIPTS = sorted(ROOT.glob("domains/*/scripts/*.json"))
SAMPLES = ROOT / "tests" / "data" / "tau2_runs_sample"

# What a message must never carry: a validator's internals, or more than one line
INTERNALS = ("validation error for", "errors.pydantic.dev", "tagged-union", "Traceback", "[type=")

# --------------------------------------------------------------------------- values a mutation puts in


def _nested(depth: int) -> Any:
    value: Any = 1
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


# Values a mutation puts in, by kind; a kind is drawn first, so each kind is tried as often
ODD_KINDS: list[list[Any]] = [
    [None, True, False, 0, -1, 2**70, 1.5, -0.0, math.inf, math.nan],
    ["", "x", "0", "1.0", "a" * 300, "ééé", "null"],
    ["../../../etc/passwd", "/etc/passwd", "a/b", "..", "x\x00y", "\x1b]0;t\x07\x1b[2J", "[@click=app.quit]q[/]", "\u202eevil"],
    [[], {}, [None], {"": None}, [[[]]], {"id": 5}, _nested(150), _nested(99)],
    # JSON inside a string (tool results and arguments are recorded as text, then parsed)
    ["[" * 3000 + "]" * 3000, "[" * 150 + "]" * 150, '{"user_id": 5}', "[1, 2]", '{"a": {"b": [1, {"c": null}]}}'],
]
ODD_VALUES: list[Any] = [v for kind in ODD_KINDS for v in kind]
odd_values = st.sampled_from(ODD_KINDS).flatmap(st.sampled_from)


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path to a node of `value` (dict keys and list indexes), the root excluded."""
    out: list[tuple] = []
    stack = [(value, prefix)]
    while stack and len(out) < 4000:
        node, at = stack.pop()
        children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in children:
            out.append(at + (key,))
            if isinstance(child, (dict, list)):
                stack.append((child, at + (key,)))
    return out


def _get(value: Any, path: tuple) -> Any:
    for key in path:
        value = value[key]
    return value


# Fields the readers do something with (parse, name files after, compute on): half the mutations
# land on one of them, the other half anywhere
HOT = {
    "content", "arguments", "name", "id", "task_id", "reward", "reward_info", "messages", "tool_calls", "tool_messages",
    "role", "trial", "start_time", "termination_reason", "info", "simulations", "tasks", "text", "type", "seq", "grade",
    "trajectory", "domain", "mode", "initial_state", "evaluation_criteria", "turns", "customer", "agent", "calls",
    "env_assertions", "schema_version", "decision", "value", "error", "choices", "message", "function", "usage",
    "finish_reason", "prompt_tokens_details", "cached_tokens",
}


@st.composite
def mutated(draw: st.DrawFn, seed: Any, most: int = 3) -> Any:
    """`seed` with one to `most` mutations, each at a node chosen among its nodes (half the time
    among the fields in HOT)."""
    doc = copy.deepcopy(seed)
    for _ in range(draw(st.integers(1, most))):
        paths = _paths(doc)
        if not paths:
            return draw(odd_values)
        names = sorted({p[-1] for p in paths if p[-1] in HOT})
        if names and draw(st.booleans()):  # a field the readers use: its name first, then one of its places
            name = draw(st.sampled_from(names))
            path = draw(st.sampled_from([p for p in paths if p[-1] == name]))
        else:
            path = draw(st.sampled_from(paths))
        parent, key = _get(doc, path[:-1]), path[-1]
        op = draw(st.sampled_from(["remove", "retype", "retype", "swap", "rename", "add", "text", "number", "json-text"]))
        if op == "json-text":  # text that is itself JSON (recorded results and arguments are parsed)
            parent[key] = draw(st.sampled_from(ODD_KINDS[-1]))
            continue
        if op == "remove":
            del parent[key]
        elif op == "retype":
            parent[key] = copy.deepcopy(draw(odd_values))
        elif op == "swap":
            parent[key] = copy.deepcopy(_get(doc, draw(st.sampled_from(paths)))) if len(paths) < 4000 else None
        elif op == "rename" and isinstance(parent, dict):
            parent[draw(st.text(max_size=8))] = parent.pop(key)
        elif op == "add" and isinstance(parent, dict):
            parent[draw(st.text(max_size=8))] = copy.deepcopy(draw(odd_values))
        elif op == "text":
            parent[key] = draw(st.text(max_size=40))
        elif op == "number":
            parent[key] = draw(st.one_of(st.integers(), st.floats(allow_nan=True, allow_infinity=True)))
    return doc


@st.composite
def damaged(draw: st.DrawFn, text: str) -> bytes:
    """`text` as UTF-8, usually intact, else cut short, with a Latin-1 or invalid byte, a byte-order
    mark, or garbage appended."""
    data = text.encode("utf-8", "surrogatepass")
    how = draw(st.sampled_from(["intact"] * 5 + ["cut", "latin1", "bom", "garbage", "nul"]))
    if how == "cut" and data:
        return data[: draw(st.integers(0, len(data) - 1))]
    if how == "latin1":
        at = draw(st.integers(0, len(data)))
        return data[:at] + b"\xe9" + data[at:]
    if how == "bom":
        return b"\xef\xbb\xbf" + data
    if how == "garbage":
        return data + draw(st.binary(min_size=1, max_size=40))
    if how == "nul" and data:
        at = draw(st.integers(0, len(data) - 1))
        return data[:at] + b"\x00" + data[at + 1 :]
    return data


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def json_file(seeds: list[Any]) -> st.SearchStrategy[bytes]:
    """A JSON document: a seed mutated then damaged, a JSON value of any shape, deep nesting, or raw bytes."""
    structured = st.sampled_from(seeds).flatmap(lambda s: mutated(s)).map(_dumps).flatmap(damaged)
    anything = st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
        max_leaves=20,
    ).map(_dumps).map(str.encode)
    deep = st.integers(90, 5000).map(lambda n: ("[" * n + "]" * n).encode())
    return st.one_of(structured, structured, structured, anything, deep, st.binary(max_size=400))


def jsonl_file(seeds: list[list[Any]]) -> st.SearchStrategy[bytes]:
    """A JSON Lines file: a seed's lines with one to three lines mutated (or a raw line put in),
    then damaged as bytes; or raw bytes."""

    @st.composite
    def lines(draw: st.DrawFn) -> bytes:
        doc = copy.deepcopy(draw(st.sampled_from(seeds)))
        for _ in range(draw(st.integers(1, 3))):
            at = draw(st.integers(0, len(doc) - 1))
            how = draw(st.sampled_from(["mutate", "mutate", "mutate", "raw", "deep", "drop"]))
            if how == "mutate":
                doc[at] = draw(mutated(doc[at], most=2))
            elif how == "raw":
                doc[at] = draw(st.one_of(st.text(max_size=30), odd_values))
            elif how == "deep":
                n = draw(st.sampled_from([99, 148, 160, 3000]))
                doc[at] = '{"type": "user_message", "text": ' + "[" * n + "]" * n + "}"
            elif len(doc) > 1:
                del doc[at]
        text = "".join((d if isinstance(d, str) else _dumps(d)) + "\n" for d in doc)
        return draw(damaged(text))

    return st.one_of(lines(), lines(), lines(), st.binary(max_size=400))


# --------------------------------------------------------------------------- the contract


@dataclass
class Reader:
    name: str
    inputs: st.SearchStrategy[Any]
    run: Callable[[Any, Path], None]  # (input, an empty folder of its own) -> returns or raises


def problem(reader: Reader, value: Any, folder: Path) -> str | None:
    """None when `reader` keeps the contract on `value`, else what broke it (one line)."""
    try:
        reader.run(value, folder)
    except LedgerTuiError as exc:
        text = str(exc)
        if not text.strip():
            return f"{type(exc).__name__} with an empty message"
        if "\n" in text or "\r" in text:
            return f"{type(exc).__name__} spans several lines: {text[:200]!r}"
        leak = next((w for w in INTERNALS if w in text), None)
        if leak:
            return f"{type(exc).__name__} shows validator internals ({leak!r}): {text[:200]!r}"
    except WrittenOnRefusal as exc:
        return str(exc)
    except Exception as exc:  # the contract: nothing else escapes a reader
        import traceback

        where = traceback.extract_tb(exc.__traceback__)[-1]
        return f"{type(exc).__name__} at {Path(where.filename).name}:{where.lineno}: {str(exc)[:160]!r}"
    return None


class WrittenOnRefusal(Exception):
    """A reader refused its input but had already written something."""


_counter = itertools.count()


def fresh(folder: Path, name: str) -> Path:
    """A file name in `folder` never used before in this process (readers cache by path)."""
    return folder / f"{next(_counter)}-{name}"


# --------------------------------------------------------------------------- seeds


def _trajectory_seeds() -> list[list[Any]]:
    """Shipped sessions cut to their first events, each ending as a graded failed run (so report
    and audit classify it, reading its grade)."""
    seeds = []
    for path in SESSIONS[::2]:
        events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        ended = {
            "seq": 14, "type": "session_ended", "reason": "user_stop", "db_digest": "", "reward": 0.0,
            "termination": "user_stop",
            "grade": {"reward": 0.0, "db_check": {"db_match": False}, "env_assertions": [{"func_name": "f", "met": False}]},
        }
        seeds.append(events[:14] + [ended])
    return seeds


def _trimmed_db(path: Path, keep: int = 2) -> Any:
    data = json.loads(path.read_text(encoding="utf-8"))
    for key, value in data.items():
        if isinstance(value, dict):
            data[key] = dict(list(value.items())[:keep])
        elif isinstance(value, list):
            data[key] = value[:keep]
    return data


def _tau2_seed(domain: str, messages: int = 14) -> dict[str, Any]:
    data = json.loads((SAMPLES / f"gpt-4.1_{domain}_sample.json").read_text(encoding="utf-8"))
    sim = data["simulations"][0]
    sim["messages"] = sim["messages"][:messages]
    data["simulations"] = [sim]
    data["tasks"] = [t for t in data["tasks"] if t["id"] == sim["task_id"]]
    return data


def _result_lines() -> list[list[Any]]:
    base = {
        "domain": "airline", "task_id": "airline_01_cancel_recent_booking", "trial": 0, "mode": "full", "agent": "m",
        "reward": 1.0, "termination": "user_stop", "trajectory": "trajectories/airline/full/t.jsonl",
        "grade": {"reward": 1.0, "components": {"DB": 1.0}}, "prompt_tokens": 10, "completion_tokens": 2,
        "ledger_tokens": 1, "policy_tokens": 1, "transcript_tokens": 8, "model_calls": 3, "allow": 1, "revise": 0,
        "block": 0, "revise_exhausted": 0, "seconds": 0.5, "error": None,
    }
    failed = {**base, "trial": 1, "reward": 0.0, "revise": 1, "block": 1, "trajectory": "trajectories/airline/full/blocked.jsonl"}
    infra = {**base, "trial": 2, "reward": 0.0, "termination": "infrastructure_error", "error": "agent: The endpoint did not answer."}
    lost = {  # a failed run whose trajectory is gone: classified from its grade alone
        **base, "trial": 3, "reward": 0.0, "trajectory": "trajectories/gone.jsonl",
        "grade": {"reward": 0.0, "db_check": {"db_match": False}, "env_assertions": [{"func_name": "f", "met": False}]},
    }
    return [[base, failed, infra, lost], [lost, failed, base]]


# --------------------------------------------------------------------------- the readers


def _write(folder: Path, name: str, data: bytes) -> Path:
    path = fresh(folder, name)
    path.write_bytes(data)
    return path


def _trajectory(data: bytes, folder: Path) -> None:
    from ledger_tui.engine.store.trajectories import read_trajectory

    read_trajectory(_write(folder, "t.jsonl", data))


def _trajectory_lazy(data: bytes, folder: Path) -> None:
    """What a replay reads (`read_trajectory(lazy=True)`): every event read back from its line, and
    the state at the last step and at the first."""
    from ledger_tui.engine.store.trajectories import read_trajectory

    events = read_trajectory(_write(folder, "t.jsonl", data), lazy=True).events
    list(events)
    timeline = getattr(events, "timeline", None)
    if timeline is not None:
        timeline.final
        timeline.at(0)


def _why(data: bytes, folder: Path) -> None:
    """What `why --all` reads and explains: the index's fast path (its decisions validated as they
    are explained), or the full reader it falls back to, before or while explaining."""
    from ledger_tui.commands.reading import _explained
    from ledger_tui.engine.events import Verdict
    from ledger_tui.engine.store.index import use_for_why
    from ledger_tui.explain import WHY_DISCLOSES, WHY_EXPLAINS

    use_for_why(_write(folder, "t.jsonl", data), WHY_EXPLAINS, tuple(Verdict), WHY_DISCLOSES, None, _explained)


def _trajectory_folder(data: bytes, folder: Path) -> None:
    """A folder of trajectories (as import-tau2 leaves one) through report, audit, browse's index
    and `why`'s explanations."""
    from ledger_tui.engine.events import Verdict
    from ledger_tui.engine.store.trajectories import read_trajectory
    from ledger_tui.eval.report import build_report
    from ledger_tui.eval.audit import audit, audit_lines
    from ledger_tui.explain import decisions, explain_decision
    from ledger_tui.ui.run_index import load_runs

    run = fresh(folder, "runs")
    run.mkdir()
    path = run / "task-1-trial-0-x.jsonl"
    path.write_bytes(data)
    for call in (lambda: build_report(run), lambda: audit_lines(audit(run)[0]), lambda: load_runs(run)):
        try:
            call()
        except LedgerTuiError as exc:
            if "holds no graded runs" not in str(exc) and "holds neither" not in str(exc):
                raise
    for event in decisions(read_trajectory(path).events, tuple(Verdict)):
        explain_decision(event, None)


def _script(data: bytes, folder: Path) -> None:
    from ledger_tui.engine.agents.script import load_script

    load_script(_write(folder, "s.json", data))


def _tasks(data: bytes, folder: Path) -> None:
    from ledger_tui.engine.agents.tasks import load_tasks

    load_tasks(_write(folder, "tasks.json", data))


def _db(domain_name: str, file_name: str = "db.json") -> Callable[[bytes, Path], None]:
    def run(data: bytes, folder: Path) -> None:
        from ledger_tui.domains import load_domain

        domain = load_domain(domain_name)
        where = fresh(folder, "db")
        where.mkdir()
        if file_name != "db.json":  # the phone's file beside a valid agent db
            (where / "db.json").write_bytes((ROOT / "domains" / domain_name / "db.json").read_bytes())
        (where / file_name).write_bytes(data)
        try:
            domain.load_db(where / "db.json")
        finally:  # the readers' caches keep what they read by path: forget this example's files
            from ledger_tui.domains.telecom import state

            for cache in (domain._cache, state._RAW):
                for key in [k for k in cache if str(folder) in k]:
                    del cache[key]

    return run


def _tau2(data: bytes, folder: Path) -> None:
    """import-tau2 then grade, as the CLI runs them on a results file."""
    from ledger_tui.eval.regrade import regrade
    from ledger_tui.eval.tau2 import import_tau2
    from ledger_tui.eval.tau2_data import default_tau2_data

    path = _write(folder, "results.json", data)
    _import_then_grade(path, folder, import_tau2, regrade, default_tau2_data())


def _import_then_grade(path: Path, folder: Path, import_tau2: Any, regrade: Any, tau2_data: Path | None) -> None:
    from ledger_tui.engine.store.trajectories import read_trajectory

    out = fresh(folder, "out")
    try:
        imported = import_tau2(path, out)
    except LedgerTuiError:
        if out.exists():
            raise WrittenOnRefusal(f"import-tau2 refused {path.name} but wrote {sorted(p.name for p in out.iterdir())[:3]}") from None
        raise
    for written in imported.paths:
        read_trajectory(written)  # what import writes reads back
    if tau2_data is not None:
        regrade(path, tau2_data)


@st.composite
def tau2_folders(draw: st.DrawFn) -> dict[str, Any]:
    """τ²-bench's folder layout: results.json with a simulation_index, simulations/<id>.json; ids
    drawn among safe ones and ones that lead out of the folder."""
    seed = _tau2_seed(draw(st.sampled_from(["retail", "telecom"])), messages=8)
    sim = draw(mutated(seed["simulations"][0], most=2)) if draw(st.booleans()) else seed["simulations"][0]
    ids = draw(
        st.lists(
            st.sampled_from(
                ["sim-a", "sim-b", "../outside", "../../etc/passwd", "/etc/passwd", "a/b", "..", ".", "", "x\x00y",
                 "a" * 300, "link", None, 5, {"id": "sim-a"}, {"no": "id"}, {"id": ["x"]}]
            ),
            min_size=1, max_size=3,
        )
    )
    return {"meta": {k: v for k, v in seed.items() if k != "simulations"}, "sim": sim, "ids": ids}


def _tau2_folder(spec: dict[str, Any], folder: Path) -> None:
    from ledger_tui.eval.regrade import regrade
    from ledger_tui.eval.tau2 import import_tau2
    from ledger_tui.eval.tau2_data import default_tau2_data

    run = fresh(folder, "run")
    (run / "simulations").mkdir(parents=True)
    (folder / "outside.json").write_text(_dumps(spec["sim"]), encoding="utf-8")
    meta = dict(spec["meta"], simulation_index=spec["ids"])
    (run / "results.json").write_text(_dumps(meta), encoding="utf-8")
    for name in ("sim-a", "sim-b"):
        (run / "simulations" / f"{name}.json").write_text(_dumps({**spec["sim"], "id": name}), encoding="utf-8")
    (run / "simulations" / "link.json").symlink_to(folder / "outside.json")
    _import_then_grade(run, folder, import_tau2, regrade, default_tau2_data())


def _results_folder(data: bytes, folder: Path) -> None:
    """An eval folder's results.jsonl through eval's resume, report and browse."""
    from ledger_tui.eval.report import build_report
    from ledger_tui.eval.results import read_results_file
    from ledger_tui.ui.run_index import load_runs

    run = fresh(folder, "eval")
    (run / "trajectories" / "airline" / "full").mkdir(parents=True)
    shutil.copy(ROOT / "sessions" / "airline-cancel-blocked.jsonl", run / "trajectories" / "airline" / "full" / "blocked.jsonl")
    (run / "results.jsonl").write_bytes(data)
    read_results_file(run)
    build_report(run)
    load_runs(run)


def _completion_seeds() -> list[Any]:
    call = {"id": "call_1", "type": "function", "function": {"name": "get_user_details", "arguments": '{"user_id": "u1"}'}}
    reply = {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello.", "tool_calls": [call]}, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 4}},
    }
    return [reply]


def _completion(data: bytes, folder: Path) -> None:
    """A model endpoint's 200 reply, as the real client reads it."""
    from ledger_tui.engine.model.models import read_completion

    read_completion(data, "http://127.0.0.1:1/v1")


def readers() -> list[Reader]:
    """Every reader, with its inputs (built once: the seeds read shipped files)."""
    from ledger_tui.domains import available

    tasks = [json.loads((ROOT / "domains" / d / "tasks.json").read_text(encoding="utf-8"))[:2] for d in available()]
    scripts = [json.loads(p.read_text(encoding="utf-8")) for p in SCRIPTS]
    out = [
        Reader("trajectory", jsonl_file(_trajectory_seeds()), _trajectory),
        Reader("trajectory folder", jsonl_file(_trajectory_seeds()), _trajectory_folder),
        Reader("trajectory, lazy (replay)", jsonl_file(_trajectory_seeds()), _trajectory_lazy),
        Reader("trajectory, why", jsonl_file(_trajectory_seeds()), _why),
        Reader("script", json_file(scripts), _script),
        Reader("task file", json_file(tasks), _tasks),
    ]
    for domain in available():
        out.append(Reader(f"--db {domain}", json_file([_trimmed_db(ROOT / "domains" / domain / "db.json")]), _db(domain)))
    out.append(Reader("--db telecom phone", json_file([json.loads((ROOT / "domains/telecom/user_db.json").read_text())]), _db("telecom", "user_db.json")))
    out.append(Reader("tau2 results", json_file([_tau2_seed("retail"), _tau2_seed("telecom"), _tau2_seed("airline")]), _tau2))
    out.append(Reader("tau2 folder", tau2_folders(), _tau2_folder))
    out.append(Reader("results.jsonl", jsonl_file(_result_lines()), _results_folder))
    out.append(Reader("model reply", json_file(_completion_seeds()), _completion))
    return out
