"""Both sides of a telecom session together: loading, digests, the sync step and task set-up.

- `load_state` reads this project's pair (`db.json` + `user_db.json`) or τ²-bench's (`db.toml` +
  `user_db.toml`), from a file or a folder.
- `digests` gives the agent-db and user-db digests, each computed as τ²-bench does (§1.4).
- `sync` is the dual-control step run after every successful call (§4.7): the phone learns the
  line's status, roaming and data allowance; a paid payment request marks the bill Paid.
- `init_task` applies a task's `initial_state`: the phone starts factory-fresh (τ²-bench's default
  user db, which is what its tasks assume; the shipped `user_db.json` is Priya Raman's phone for
  free play and scripted sessions), then `initialization_data` is deep-merged and each
  `initialization_actions` entry (set-up functions or tools, by name) runs, each followed by sync.
"""

from __future__ import annotations

import copy
import datetime as dt
import tomllib
from pathlib import Path
from typing import Any, Callable

from pydantic import ValidationError

from ledger_tui.engine.errors import DatabaseError, TaskError
from ledger_tui.engine.store.reading import parse_json, read_text, words
from ledger_tui.engine.store.serialize import digest

from . import device, phone_setup, tools
from .schema import Bill, LineItem, PaymentRequest, TelecomDB, TelecomState, TelecomUserDB

HERE = Path(__file__).parent
_RAW: dict[str, Any] = {}


# ----------------------------------------------------------------------------- loading


def _read(path: Path) -> Any:
    key = str(path.resolve())
    if key not in _RAW:
        fix = "pass a τ²-bench telecom db.toml or db.json"
        text = read_text(path, DatabaseError, fix, missing=f"Database file {path} does not exist; check --db.")
        if path.suffix == ".toml":
            try:
                _RAW[key] = tomllib.loads(text)
            except tomllib.TOMLDecodeError as exc:
                raise DatabaseError(f"Database file {path} cannot be parsed ({exc}); {fix}.") from None
            except RecursionError:
                raise DatabaseError(f"Database file {path} is nested too deeply; {fix}.") from None
        else:
            _RAW[key] = parse_json(text, DatabaseError, f"Database file {path}", fix)
    return _RAW[key]


def _pair(path: Path | None) -> tuple[Path, Path | None]:
    """(agent db file, user db file or None for a default phone) for what --db points at."""
    if path is None:
        return HERE / "db.json", HERE / "user_db.json"
    path = Path(path)
    if path.is_dir():
        for agent, user in (("db.toml", "user_db.toml"), ("db.json", "user_db.json")):
            if (path / agent).exists():
                return path / agent, (path / user if (path / user).exists() else None)
        raise DatabaseError(f"{path} holds neither db.toml nor db.json; point --db at a telecom database.")
    sibling = path.with_name("user_db" + path.suffix)
    return path, (sibling if sibling.exists() and sibling != path else None)


def state_files(path: Path | None = None) -> list[Path]:
    """The files `load_state(path)` reads: the carrier's db, then the phone's if there is one."""
    agent_file, user_file = _pair(path)
    return [agent_file] if user_file is None else [agent_file, user_file]


def load_state(path: Path | None = None) -> TelecomState:
    """A fresh, private copy of both databases (the shipped pair, or the one `path` points at)."""
    agent_file, user_file = _pair(path)
    try:
        agent = TelecomDB.model_validate(_read(agent_file))
    except ValidationError as exc:
        raise DatabaseError(
            f"{agent_file} does not match the telecom schema: {words(exc)}; pass a τ²-bench telecom database."
        ) from None
    try:
        user = TelecomUserDB.model_validate(_read(user_file)) if user_file else TelecomUserDB()
    except ValidationError as exc:
        raise DatabaseError(f"{user_file} does not match the telecom phone schema: {words(exc)}; fix or remove it.") from None
    return TelecomState(agent_db=agent, user_db=user)


def digests(state: TelecomState) -> tuple[str, str | None]:
    return digest(state.agent_db), digest(state.user_db)


# ----------------------------------------------------------------------------- sync


def sync(state: TelecomState) -> None:
    """Carry facts between the carrier's records and the phone (a no-op until the phone has a number)."""
    db, user = state.agent_db, state.user_db
    s = user.surroundings
    if s.phone_number is None:
        return
    line = next((l for l in db.lines if l.phone_number == s.phone_number), None)
    if line is None:
        raise tools.ToolError(f"Line with phone number {s.phone_number} not found")
    s.line_active = line.status == "Active"
    s.roaming_allowed = line.roaming_enabled
    plan = tools.find_plan(db, line.plan_id)
    s.mobile_data_usage_exceeded = line.data_used_gb >= plan.data_limit_gb + line.data_refueling_gb
    request = s.payment_request
    if request is not None and request.paid:
        tools.find_bill(db, request.bill_id).status = "Paid"
        s.payment_request = None
    if s.payment_request is None:
        customer = tools.get_customer_by_phone(state, tools.PhoneArgs(phone_number=s.phone_number))
        waiting = tools.awaiting_payment(db, customer)
        if waiting:
            s.payment_request = PaymentRequest(bill_id=waiting[0].bill_id, amount_due=waiting[0].total_due, paid=False)


# ----------------------------------------------------------------------------- set-up functions


def _agent_setup_functions(state: TelecomState) -> dict[str, Callable[..., Any]]:
    db = state.agent_db

    def set_data_usage(customer_id: str, line_id: str, data_used_gb: Any) -> None:
        tools.target_line(db, customer_id, line_id).data_used_gb = data_used_gb  # raw, as τ²-bench

    def suspend_line_for_overdue_bill(
        customer_id: str, line_id: str, new_bill_id: str, contract_ended: bool = False
    ) -> None:
        line = tools.find_line(db, line_id)
        if line.status != "Active":
            raise tools.ToolError(f"Line {line_id} is {line.status}, not Active.")
        price = tools.find_plan(db, line.plan_id).price_per_month
        if price <= 0:
            raise tools.ToolError(f"The plan of line {line_id} costs nothing; there is nothing to be overdue.")
        customer = tools.find_customer(db, customer_id)
        if any(b.bill_id in customer.bill_ids and b.status == "Overdue" for b in db.bills):
            raise tools.ToolError(f"Customer {customer_id} already has an overdue bill.")
        bill = Bill(
            bill_id=new_bill_id,
            customer_id=customer_id,
            period_start=dt.date(2025, 1, 1),
            period_end=dt.date(2025, 1, 31),
            issue_date=dt.date(2025, 1, 1),
            total_due=0,
            due_date=dt.date(2025, 1, 15),
            line_items=[LineItem(description=f"Charge for line {line_id}", amount=price, date=tools.TODAY, item_type="Charge")],
            status="Overdue",
        )
        bill.total_due = 0 + price
        db.bills.append(bill)
        customer.bill_ids.append(new_bill_id)
        line.status = "Suspended"
        line.suspension_start_date = tools.TODAY
        if contract_ended:
            line.contract_end_date = dt.date(2025, 1, 31)

    return {"set_data_usage": set_data_usage, "suspend_line_for_overdue_bill": suspend_line_for_overdue_bill}


def _agent_assertions(state: TelecomState) -> dict[str, Callable[..., bool]]:
    db = state.agent_db

    def assert_data_refueling_amount(customer_id: str, line_id: str, expected_amount: float) -> bool:
        return abs(tools.target_line(db, customer_id, line_id).data_refueling_gb - expected_amount) < 1e-6

    def assert_line_status(customer_id: str, line_id: str, expected_status: str) -> bool:
        return tools.target_line(db, customer_id, line_id).status == expected_status

    def assert_overdue_bill_exists(customer_id: str, overdue_bill_id: str) -> bool:
        bill = tools.find_bill(db, overdue_bill_id)
        if bill.customer_id != customer_id or bill.status != "Overdue":
            raise tools.ToolError(f"Bill {overdue_bill_id} is not an overdue bill of {customer_id}.")
        return True

    def assert_no_overdue_bill(overdue_bill_id: str) -> bool:
        bill = next((b for b in db.bills if b.bill_id == overdue_bill_id), None)
        return bill is None or bill.status == "Paid"

    return {
        "assert_data_refueling_amount": assert_data_refueling_amount,
        "assert_line_status": assert_line_status,
        "assert_overdue_bill_exists": assert_overdue_bill_exists,
        "assert_no_overdue_bill": assert_no_overdue_bill,
    }


def _tool_function(state: TelecomState, name: str, requestor: str) -> Callable[..., Any] | None:
    """A tool called by name with keyword arguments (set-up may call ordinary tools too)."""
    table = device.USER_TOOLS if requestor == "user" else tools.TOOLS
    tool = next((t for t in table if t.name == name), None)
    if tool is None:
        return None
    return lambda **kwargs: tool.run(state, tool.args.model_validate(kwargs))


def call_function(state: TelecomState, env_type: str, func_name: str, arguments: dict[str, Any]) -> Any:
    """Run one set-up or assertion function (or tool) by τ²-bench name, then sync."""
    side = "user" if env_type == "user" else "assistant"
    table: dict[str, Callable[..., Any]] = {}
    if side == "user":
        table.update(phone_setup.user_setup_functions(state))
        table.update(phone_setup.user_assertions(state))
        # τ²-bench's name for the device-roaming check (phone_setup.py registers it under another name)
        table.setdefault("assert_mobile_roaming_status", table["assert_mobile_data_roaming_status"])
    else:
        table.update(_agent_setup_functions(state))
        table.update(_agent_assertions(state))
    fn = table.get(func_name) or _tool_function(state, func_name, side)
    if fn is None:
        raise TaskError(f"{func_name!r} is not a telecom {side}-side function; fix the task's initial_state.")
    result = fn(**(arguments or {}))
    sync(state)
    return result


def run_assertion(state: TelecomState, assertion: dict[str, Any]) -> bool:
    """One `env_assertions` entry: the function's result compared with `assert_value` (default true)."""
    value = call_function(state, assertion.get("env_type", "assistant"), assertion["func_name"], assertion.get("arguments") or {})
    return bool(value) == bool(assertion.get("assert_value", True))


# ----------------------------------------------------------------------------- task set-up


def _deep_merge(base: Any, update: Any) -> Any:
    if isinstance(base, dict) and isinstance(update, dict):
        out = dict(base)
        for key, value in update.items():
            out[key] = _deep_merge(base.get(key), value) if key in base else copy.deepcopy(value)
        return out
    return copy.deepcopy(update)


def _initial_state(task: Any) -> dict[str, Any]:
    if task is None:
        return {}
    if isinstance(task, dict):
        initial = task.get("initial_state", task)
    else:
        initial = getattr(task, "initial_state", None)
    return dict(initial or {})


def init_task(state: TelecomState, task: Any) -> None:
    """Apply a task's `initial_state` to a fresh state, in place (a Task, its dict, or the initial_state)."""
    initial = _initial_state(task)
    state.user_db = TelecomUserDB()
    data = initial.get("initialization_data") or {}
    if data.get("agent_data"):
        merged = _deep_merge(state.agent_db.model_dump(), data["agent_data"])
        state.agent_db = TelecomDB.model_validate(merged)
    if data.get("user_data"):
        merged = _deep_merge(state.user_db.model_dump(), data["user_data"])
        state.user_db = TelecomUserDB.model_validate(merged)
    sync(state)
    for action in initial.get("initialization_actions") or []:
        call_function(state, action.get("env_type", "assistant"), action["func_name"], action.get("arguments") or {})
