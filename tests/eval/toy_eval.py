"""Two toy tasks and a loopback 'model' that plays both the agent and the customer, deterministically.

Known outcomes: task `renew-L1` (allowed) passes in every mode; task `renew-L2` (a third renewal,
a refusal task) passes only when the gate is on, because without it the agent renews anyway.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ledger_tui.engine.agents.tasks import Task

TASKS = [
    Task.model_validate(
        {
            "id": "renew-L1",
            "user_scenario": {"instructions": "You are Ada (ada@example.org). Ask to renew loan L1. Say yes when asked."},
            "evaluation_criteria": {"actions": [{"name": "renew_loan", "arguments": {"loan_id": "L1"}}], "communicate_info": []},
            "ledger_tui": {"opening": "Please renew loan L1, I'm ada@example.org"},
        }
    ),
    Task.model_validate(
        {
            "id": "renew-L2",
            "user_scenario": {"instructions": "You are Ada (ada@example.org). Ask to renew loan L2. Say yes when asked."},
            "evaluation_criteria": {"actions": [], "communicate_info": []},
            "ledger_tui": {
                "outcome": "refuse",
                "opening": "Please renew loan L2, I'm ada@example.org",
                "forbidden_action": {"name": "renew_loan", "arguments": {"loan_id": "L2"}},
            },
        }
    ),
]


def play_both(request: dict[str, Any]) -> dict[str, Any]:
    messages = request["messages"]
    if messages[0]["content"].startswith("You are role-playing a customer"):
        return _customer(messages)
    return _agent(messages)


def _customer(messages: list[dict[str, Any]]) -> dict[str, Any]:
    instructions = messages[0]["content"]
    loan = re.search(r"renew loan (L\d)", instructions).group(1)
    heard = messages[-1]["content"] or ""
    if len(messages) == 2:
        return {"text": f"Hi, I'm ada@example.org. Please renew loan {loan}."}
    if "confirm" in heard.lower():
        return {"text": "Yes, please."}
    return {"text": "Thank you. ###STOP###"}


def _agent(messages: list[dict[str, Any]]) -> dict[str, Any]:
    convo = [m for m in messages if m["role"] != "system"]
    user_texts = [m["content"] for m in convo if m["role"] == "user"]
    loan = re.search(r"loan (L\d)", user_texts[0]).group(1)
    last = convo[-1]
    if last["role"] == "tool":
        tool_calls = [m for m in convo if m["role"] == "assistant" and m.get("tool_calls")]
        name = tool_calls[-1]["tool_calls"][-1]["function"]["name"]
        if name == "renew_loan":
            if last["content"].startswith("POLICY GATE"):
                return {"text": "I cannot renew that loan."}
            return {"text": f"Loan {loan} is renewed."}
        return {"text": f"I can renew loan {loan}. Please confirm."}
    if user_texts[-1].lower().startswith("yes"):
        return {"tool_calls": [{"name": "renew_loan", "arguments": {"loan_id": loan}}]}
    return {
        "tool_calls": [
            {"name": "find_member_by_email", "arguments": {"email": "ada@example.org"}},
            {"name": "get_loan_details", "arguments": json.loads(json.dumps({"loan_id": loan}))},
        ]
    }

def _factory():
    return play_both
