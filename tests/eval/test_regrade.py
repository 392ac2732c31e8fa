"""`ledger-tui grade`: real τ²-bench runs graded again with this project's environment agree with
τ²-bench's recorded reward_info, component by component; bad input is one sentence."""

from __future__ import annotations

import copy
import json

import pytest

from ledger_tui.eval.regrade import grade_lines, regrade
from tests.eval.tau2_samples import ROOT, as_folder, as_solo, sample, sample_path, write
from tests.in_process import ledger_tui


def cli(*args):
    return ledger_tui(*args, cwd=ROOT)


def summary(lines: list[str]) -> dict[str, tuple[int, ...]]:
    """The per-component table: name -> (compared, agree[, in basis, agree])."""
    start = next(i for i, l in enumerate(lines) if l.startswith("component"))
    rows = {}
    for line in lines[start + 1:]:
        if not line.strip() or line.startswith("NL_ASSERTION"):
            break
        name, *numbers = line.split()
        rows[name] = tuple(int(n) for n in numbers)
    return rows


@pytest.mark.parametrize("domain", ["airline", "retail", "telecom"])
def test_every_component_of_the_real_runs_agrees_with_the_recorded_grade(domain):
    graded = regrade(sample_path(domain))
    assert graded.grades and all(g.agrees for g in graded.grades)
    recorded = [s["reward_info"]["reward"] for s in sample(domain)["simulations"]]
    assert [g.reward for g in graded.grades] == recorded
    rows = summary(grade_lines(graded))
    for name, (compared, agree, *_) in rows.items():
        assert compared == agree, name
    assert rows["DB"][0] == len(recorded)  # every run's DB check was compared


def test_the_telecom_sample_checks_what_it_is_there_for():
    graded = regrade(sample_path("telecom"))
    by_number = {g.number: g for g in graded.grades}
    # a refuel assertion (expected_amount, τ²-bench's keyword) that is met, on a run that passed
    refuel = by_number[1]
    task = next(t for t in sample("telecom")["tasks"] if t["id"] == refuel.task_id)
    names = [a["func_name"] for a in task["evaluation_criteria"]["env_assertions"]]
    assert "assert_data_refueling_amount" in names
    assert refuel.reward == 1.0 and refuel.components["ENV_ASSERTION"].ours_checks == [True] * len(names)
    # runs 3 and 5: the gold state is built without sync, so the DB check fails as recorded
    assert [by_number[n].components["DB"].ours for n in (3, 5)] == [0.0, 0.0]
    assert all(by_number[n].components["DB"].recorded == 0.0 for n in (3, 5))
    # ACTION in the basis: run 4 missed a gold action and scored 0 as recorded
    action = by_number[4].components["ACTION"]
    assert action.in_basis and action.ours == action.recorded == 0.0 and by_number[4].reward == 0.0


def test_cli_prints_each_simulation_next_to_the_recorded_grade(tmp_path):
    out = cli("grade", str(sample_path("retail")))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    head = next(l for l in lines if l.lstrip().startswith("#"))
    assert head.split() == ["#", "trial", "reward", "DB", "COMM", "ENV", "ACTION", "NL", "task"]
    row = next(l for l in lines if l.split()[:1] == ["3"])
    assert row.split() == ["3", "0", "0=0", "0=0", "·", "·", "(0=0)", "·", "55"]
    assert "overall: 3 of 3 simulations agree on every scored component and the reward" in out.stdout
    assert all(len(l) <= 80 for l in lines), [l for l in lines if len(l) > 80]


def test_a_recorded_grade_that_differs_is_marked_and_the_exit_status_is_1(tmp_path):
    data = sample("airline")
    data["simulations"][0]["reward_info"]["db_check"] = {"db_match": True, "db_reward": 1.0}
    out = cli("grade", str(write(data, tmp_path / "results.json")))
    assert out.returncode == 1
    row = next(l for l in out.stdout.splitlines() if l.split()[:1] == ["1"])
    assert row.split()[3] == "0≠1"
    assert "overall: 1 of 2 simulations agree" in out.stdout
    assert summary(out.stdout.splitlines())["DB"] == (2, 1, 2, 1)


def test_a_run_cut_short_scores_0_and_nothing_else_is_graded(tmp_path):
    data = sample("retail")
    sim = data["simulations"][0]
    sim["termination_reason"] = "max_steps"
    sim["reward_info"] = {"reward": 0.0, "reward_basis": None, "info": {"note": "terminated prematurely"}}
    graded = regrade(write(data, tmp_path / "results.json"))
    first = graded.grades[0]
    assert first.reward == 0.0 and first.reward_agrees and first.components == {}
    assert "ended with max_steps" in first.notes[0]


def test_the_folder_layout_grades_the_same(tmp_path):
    folder = as_folder(sample("telecom"), tmp_path / "run")
    for path in (folder, folder / "results.json"):
        out = cli("grade", str(path))
        assert out.returncode == 0, out.stderr
        assert "overall: 5 of 5 simulations agree" in out.stdout


def test_solo_mode_replays_the_agents_phone_calls_on_the_phone(tmp_path):
    solo = write(as_solo(sample("telecom")), tmp_path / "solo.json")
    graded = regrade(solo)
    assert graded.results.solo
    assert all(g.agrees for g in graded.grades), [g.number for g in graded.grades if not g.agrees]
    assert [g.reward for g in graded.grades] == [s["reward_info"]["reward"] for s in sample("telecom")["simulations"]]
    out = cli("grade", str(solo))
    assert out.returncode == 0 and "solo mode" in out.stderr


def test_a_simulation_without_a_task_id_is_an_unknown_task_with_a_warning(tmp_path):
    data = sample("retail")
    data["simulations"][1]["task_id"] = None
    out = cli("grade", str(write(data, tmp_path / "results.json")))
    assert "warning: 1 of 3 simulations have no task_id; they are listed as unknown task." in out.stderr
    row = next(l for l in out.stdout.splitlines() if l.split()[:1] == ["2"])
    assert row.endswith("(unknown task)") and row.split()[2:8] == ["·"] * 6
    assert "overall: 3 of 3" in out.stdout  # nothing graded, nothing contradicted


def test_diffs_lists_replayed_results_that_differ_from_the_recording(tmp_path):
    data = sample("airline")
    tool = next(m for m in data["simulations"][1]["messages"] if m["role"] == "tool")
    tool["content"] = "something else entirely"
    out = cli("grade", str(write(data, tmp_path / "results.json")), "--diffs")
    assert "recorded: something else entirely" in out.stdout
    assert "replay: 1 of 30 tool results differ from the recording" in out.stdout


@pytest.mark.parametrize(
    "content,expected",
    [
        (None, "does not exist"),
        ("not json {", "is not valid JSON"),
        ('{"hello": 1}', "has no \"simulations\""),
        (json.dumps({"info": {"environment_info": {"domain_name": "banking"}}, "simulations": []}), "is for domain 'banking'"),
    ],
)
def test_bad_input_is_one_sentence(tmp_path, content, expected):
    path = tmp_path / "results.json"
    if content is not None:
        path.write_text(content)
    out = cli("grade", str(path))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and expected in out.stderr


def test_a_folder_that_is_not_tau2_data_is_one_sentence(tmp_path):
    out = cli("grade", str(sample_path("airline")), "--tau2-data", str(tmp_path))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "domains/airline" in out.stderr


def test_missing_tasks_fall_back_to_the_data_folders_tasks(tmp_path):
    data = copy.deepcopy(sample("airline"))
    del data["tasks"]
    graded = regrade(write(data, tmp_path / "results.json"))
    assert any("carries no task definitions" in w for w in graded.warnings)
    assert all(g.agrees for g in graded.grades)
