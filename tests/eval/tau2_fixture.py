"""Writes a τ²-bench-format results.json for retail, with tool messages produced by this project's
retail tools (so they read as the benchmark's would). Three simulations:

- `good`: identified by name + zip, order read, details listed, explicit yes, cancellation (reward 1);
- `wrong-card`: a return refunded to a card that is not the original payment method (reward 0);
- `no-checks`: a cancellation with no identification and no confirmation (reward 0).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ledger_tui.domains import load_domain
from ledger_tui.engine.environment import Environment
from ledger_tui.engine.events import ToolCall


class _Conversation:
    def __init__(self) -> None:
        self.env = Environment(load_domain("retail"))
        self.messages: list[dict[str, Any]] = []
        self.n = 0
        self.say("assistant", "Hi! How can I help you today?")

    def say(self, role: str, text: str) -> None:
        self.messages.append({"role": role, "content": text, "tool_calls": None, "turn_idx": len(self.messages), "timestamp": "2026-01-01T00:00:00"})

    def call(self, name: str, **arguments: Any) -> None:
        self.n += 1
        call_id = f"call_{self.n}"
        self.messages.append(
            {"role": "assistant", "content": None, "turn_idx": len(self.messages),
             "tool_calls": [{"id": call_id, "name": name, "arguments": arguments, "requestor": "assistant"}]}
        )
        outcome = self.env.execute(ToolCall(id=call_id, name=name, arguments=arguments))
        self.messages.append({"role": "tool", "id": call_id, "content": outcome.content, "requestor": "assistant", "error": outcome.error, "turn_idx": len(self.messages)})


def _good() -> list[dict[str, Any]]:
    c = _Conversation()
    c.say("user", "Hi, I'm Sven Garcia, zip 48223. I ordered #W4419902 by mistake, please cancel it.")
    c.call("find_user_id_by_name_zip", first_name="Sven", last_name="Garcia", zip="48223")
    c.call("get_order_details", order_id="#W4419902")
    c.say("assistant", "I can cancel order #W4419902 (reason: ordered by mistake). Shall I go ahead?")
    c.say("user", "Yes, please.")
    c.call("cancel_pending_order", order_id="#W4419902", reason="ordered by mistake")
    c.say("assistant", "Your order #W4419902 is cancelled.")
    c.say("user", "Thanks! ###STOP###")
    return c.messages


def _wrong_card() -> list[dict[str, Any]]:
    c = _Conversation()
    c.say("user", "Hi, my email is ana.novak1158@example.com. I want to return the Water Bottle from #W5595026 to credit_card_7913638.")
    c.call("find_user_id_by_email", email="ana.novak1158@example.com")
    c.call("get_order_details", order_id="#W5595026")
    c.call("get_user_details", user_id="ana_novak_2235")
    c.say("assistant", "I will return item 3031110242 from #W5595026 with a refund to credit_card_7913638. Confirm?")
    c.say("user", "Yes")
    c.call("return_delivered_order_items", order_id="#W5595026", item_ids=["3031110242"], payment_method_id="credit_card_7913638")
    c.say("assistant", "Done.")
    c.say("user", "###STOP###")
    return c.messages


def _no_checks() -> list[dict[str, Any]]:
    c = _Conversation()
    c.say("user", "Cancel order #W4909150 please, I no longer need it.")
    c.call("get_order_details", order_id="#W4909150")
    c.call("cancel_pending_order", order_id="#W4909150", reason="no longer needed")
    c.say("assistant", "Cancelled.")
    c.say("user", "###STOP###")
    return c.messages


def write_results(path: Path, sims: list[tuple[str, str, float, list[dict[str, Any]]]] | None = None) -> Path:
    """The three simulations above, or `sims`: (name, task id, reward, messages) each."""
    sims = sims or [
        ("good", "cancel_ordered_by_mistake", 1.0, _good()),
        ("wrong-card", "refuse_refund_other_card", 0.0, _wrong_card()),
        ("no-checks", "cancel_no_longer_needed_gift_card", 0.0, _no_checks()),
    ]
    data = {
        "timestamp": "2026-01-01T00:00:00",
        "info": {
            "git_commit": "test", "num_trials": 1, "max_steps": 100, "max_errors": 10,
            "user_info": {"implementation": "user_simulator", "llm": "sim-model", "llm_args": {}},
            "agent_info": {"implementation": "llm_agent", "llm": "some-agent-model", "llm_args": {}},
            "environment_info": {"domain_name": "retail", "policy": "(policy text)", "tool_defs": None},
            "seed": 300,
        },
        "tasks": [{"id": t, "user_scenario": {"instructions": "…"}, "evaluation_criteria": {"actions": []}} for _, t, _, _ in sims],
        "simulations": [
            {
                "id": f"{name}-0000-0000", "task_id": task, "trial": 0, "timestamp": "2026-01-01T00:00:00",
                "start_time": "2026-01-01T00:00:00", "end_time": "2026-01-01T00:01:00", "duration": 60.0,
                "termination_reason": "user_stop", "agent_cost": 0.01, "user_cost": 0.01,
                "reward_info": {"reward": reward, "db_check": {"db_match": bool(reward), "db_reward": reward}, "reward_basis": ["DB"]},
                "messages": messages, "seed": 1, "mode": "half_duplex",
            }
            for name, task, reward, messages in sims
        ],
    }
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path
