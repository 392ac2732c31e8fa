"""Telecom env assertions take τ²-bench's function names and argument names.

τ²-bench's tasks call `assert_data_refueling_amount(customer_id, line_id, expected_amount)`; an
assertion that cannot run is graded as not met, so a renamed argument silently scores every
refuel task 0. The task below is τ²-bench's own shape (copied from its telecom tasks.json).
"""

from __future__ import annotations

import pytest

from ledger_tui.domains import load_domain
from ledger_tui.domains.telecom import state as telecom_state
from ledger_tui.engine.events import ToolCall
from ledger_tui.engine.agents.gold import fresh_environment
from ledger_tui.engine.agents.tasks import Task
from ledger_tui.eval.grade import grade_run

DOMAIN = load_domain("telecom")

REFUEL_ASSERTION = {
    "env_type": "assistant",
    "func_name": "assert_data_refueling_amount",
    "arguments": {"customer_id": "C1001", "line_id": "L1002", "expected_amount": 2.0},
    "assert_value": True,
    "message": None,
}

TAU2_TASK = Task.model_validate({
    "id": "[mobile_data_issue]data_usage_exceeded[PERSONA:None]",
    "initial_state": {
        "initialization_data": None,
        "initialization_actions": [
            {"env_type": "user", "func_name": "set_user_info",
             "arguments": {"name": "John Smith", "phone_number": "555-123-2002"}},
            {"env_type": "assistant", "func_name": "set_data_usage",
             "arguments": {"customer_id": "C1001", "line_id": "L1002", "data_used_gb": 15.1}},
        ],
        "message_history": None,
    },
    "evaluation_criteria": {
        "actions": [
            {"action_id": "refuel_data_0", "requestor": "assistant", "name": "refuel_data",
             "arguments": {"customer_id": "C1001", "line_id": "L1002", "gb_amount": 2.0},
             "info": None, "compare_args": None},
        ],
        "env_assertions": [REFUEL_ASSERTION],
        "communicate_info": None,
        "nl_assertions": None,
        "reward_basis": ["ENV_ASSERTION"],
    },
})


def test_refuel_assertion_in_tau2_shape_is_graded():
    env = fresh_environment(DOMAIN, TAU2_TASK)
    before = grade_run(DOMAIN, TAU2_TASK, env, [], "agent_stop")
    assert [a["met"] for a in before.env_assertions] == [False]
    assert not any("failed to run" in n for n in before.notes), before.notes  # it ran, and is false
    assert before.reward == 0.0

    outcome = env.execute(ToolCall(id="c1", name="refuel_data",
                                   arguments={"customer_id": "C1001", "line_id": "L1002", "gb_amount": 2.0}))
    assert not outcome.error, outcome.content
    after = grade_run(DOMAIN, TAU2_TASK, env, [], "agent_stop")
    assert [a["met"] for a in after.env_assertions] == [True], after.notes
    assert after.breakdown == {"ENV_ASSERTION": 1.0} and after.reward == 1.0
    # assert_value false inverts it, as in τ²-bench
    assert not telecom_state.run_assertion(env.db, {**REFUEL_ASSERTION, "assert_value": False})


# Every env-assertion function of τ²-bench 26.3's telecom environment, with its argument names.
TAU2_ASSERTIONS = [
    ("assistant", "assert_data_refueling_amount", {"customer_id": "C1001", "line_id": "L1002", "expected_amount": 0.0}),
    ("assistant", "assert_line_status", {"customer_id": "C1001", "line_id": "L1002", "expected_status": "Active"}),
    ("assistant", "assert_no_overdue_bill", {"overdue_bill_id": "B1234321"}),
    ("user", "assert_airplane_mode_status", {"expected_status": False}),
    ("user", "assert_service_status", {"expected_status": "connected"}),
    ("user", "assert_mobile_data_status", {"expected_status": True}),
    ("user", "assert_mobile_roaming_status", {"expected_status": False}),
    ("user", "assert_mobile_data_saver_mode_status", {"expected_status": False}),
    ("user", "assert_internet_speed", {"expected_speed": 0.0, "expected_desc": None}),
    ("user", "assert_internet_not_excellent", {}),
    ("user", "assert_can_send_mms", {"expected_status": True}),
    ("user", "assert_mobile_data_usage_exceeded", {"expected_status": False}),
]


@pytest.mark.parametrize("env_type,func_name,arguments", TAU2_ASSERTIONS, ids=[a[1] for a in TAU2_ASSERTIONS])
def test_every_tau2_assertion_name_and_argument_is_accepted(env_type, func_name, arguments):
    env = fresh_environment(DOMAIN, TAU2_TASK)
    result = telecom_state.call_function(env.db, env_type, func_name, arguments)
    assert isinstance(result, bool)
