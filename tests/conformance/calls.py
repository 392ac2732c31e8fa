"""Generated tool calls for the τ²-bench conformance suite, seeded and reproducible.

Per domain, every tool of the agent (and, in telecom, of the phone) is called with:
- `gold`: the gold actions of τ²-bench's own tasks (valid calls, in the task's initial state);
- `valid`: arguments drawn from the database (often in a state the policy would refuse: a
  cancelled reservation, a delivered order, a suspended line);
- `unknown_id`: an id no record has;
- `missing`, `extra`, `wrong_type`: a required argument left out, an argument the tool does not
  take, an argument of the wrong JSON type;
- `unknown_tool`: a name neither side has.

A case is plain data: `Case(domain, task, requestor, name, arguments, kind)`, where `task` indexes
τ²-bench's task list whose initial state the call starts from (telecom: the phone's state), or is
None for the database as shipped.
"""

from __future__ import annotations

import copy
import json
import random
from dataclasses import dataclass, field
from typing import Any, Iterator

from tests.conformance.reference import data_folder, task_dicts, tau2_modules

KINDS = ("gold", "valid", "unknown_id", "missing", "extra", "wrong_type", "unknown_tool")


@dataclass(frozen=True)
class Case:
    domain: str
    task: int | None
    requestor: str
    name: str
    arguments: dict[str, Any] = field(hash=False)
    kind: str

    def label(self) -> str:
        where = f" [task {self.task}]" if self.task is not None else ""
        return f"{self.domain}:{self.kind}:{self.requestor}:{self.name}({json.dumps(self.arguments, sort_keys=True)}){where}"


def tool_signatures(domain: str) -> dict[tuple[str, str], dict[str, bool]]:
    """{(requestor, tool): {argument: required}} as the reference declares them."""
    import inspect

    env = tau2_modules()["env"][domain]()
    out: dict[tuple[str, str], dict[str, bool]] = {}
    for requestor, kit in (("assistant", env.tools), ("user", env.user_tools)):
        if kit is None:
            continue
        for name, fn in kit.tools.items():
            params = inspect.signature(fn).parameters
            out[(requestor, name)] = {p: v.default is inspect.Parameter.empty for p, v in params.items()}
    return out


def _db(domain: str) -> dict[str, Any]:
    folder = data_folder(domain)
    if domain == "telecom":
        import toml

        return toml.loads((folder / "db.toml").read_text(encoding="utf-8"))
    return json.loads((folder / "db.json").read_text(encoding="utf-8"))


# ----------------------------------------------------------------------------- pools of real values


def _pools(domain: str) -> dict[str, list[Any]]:
    db = _db(domain)
    if domain == "airline":
        users = db["users"]
        flights = db["flights"]
        dates = sorted({d for f in flights.values() for d in f["dates"]})
        airports = sorted({f["origin"] for f in flights.values()} | {f["destination"] for f in flights.values()})
        return {
            "user_id": sorted(users),
            "reservation_id": sorted(db["reservations"]),
            "flight_number": sorted(flights),
            "date": dates,
            "origin": airports,
            "destination": airports,
            "payment_id": sorted({p for u in users.values() for p in u["payment_methods"]}),
            "amount": [50, 100, 150, 250, 0, -20],
            "cabin": ["economy", "business", "basic_economy", "first"],
            "flight_type": ["one_way", "round_trip"],
            "total_baggages": [0, 1, 2, 3, 5],
            "nonfree_baggages": [0, 1, 2],
            "summary": ["The customer wants a human agent."],
            "expression": ["(1200 - 350) * 0.5", "2 + 2", "1 / 0", "abc", "2 ** 10"],
        }
    if domain == "retail":
        users = db["users"]
        orders = db["orders"]
        items = sorted({i for p in db["products"].values() for i in p["variants"]})
        return {
            "user_id": sorted(users),
            "order_id": sorted(orders),
            "product_id": sorted(db["products"]),
            "item_id": items,
            "payment_method_id": sorted({p for u in users.values() for p in u["payment_methods"]}),
            "first_name": sorted({u["name"]["first_name"] for u in users.values()}),
            "last_name": sorted({u["name"]["last_name"] for u in users.values()}),
            "zip": sorted({u["address"]["zip"] for u in users.values()}),
            "email": sorted({u["email"] for u in users.values()}),
            "address1": ["12 Elm Street"], "address2": ["Apt 4", ""], "city": ["Austin"],
            "state": ["TX"], "country": ["USA"],
            "reason": ["no longer needed", "ordered by mistake", "changed my mind"],
            "summary": ["The customer wants a human agent."],
            "expression": ["(1200 - 350) * 0.5", "2 + 2", "1 / 0", "abc"],
            "_users": [users], "_orders": [orders],
        }
    customers = db["customers"]
    return {
        "customer_id": [c["customer_id"] for c in customers],
        "line_id": [l["line_id"] for l in db["lines"]],
        "phone_number": [l["phone_number"] for l in db["lines"]],
        "bill_id": [b["bill_id"] for b in db["bills"]],
        "full_name": [c["full_name"] for c in customers],
        "dob": [c["date_of_birth"] for c in customers],
        "id": [c["customer_id"] for c in customers] + [l["line_id"] for l in db["lines"]]
        + [b["bill_id"] for b in db["bills"]] + [p["plan_id"] for p in db["plans"]]
        + [d["device_id"] for d in db["devices"]],
        "reason": ["lost phone", "travel"],
        "gb_amount": [1.0, 2, 0.5, 0, -1, 3.5],
        "limit": [1, 3, 12],
        "summary": ["The customer wants a human agent."],
        "mode": ["4g_5g_preferred", "4g_only", "3g_only", "2g_only", "5g_only", "auto"],
        "app_name": ["messaging", "browser", "camera", "maps", "unknown_app"],
        "permission": ["sms", "storage", "network", "camera", "location"],
        "apn_settings": [{"name": "internet", "apn": "internet", "mmsc_url": "http://mms.carrier.com/mms/wapenc"}],
        "_customers": [customers],
    }


def _draw(pools: dict[str, list[Any]], domain: str, name: str, arg: str, rnd: random.Random) -> Any:
    """A plausible value of `arg` for tool `name`, from the database."""
    if domain == "retail" and arg in ("item_ids", "new_item_ids"):
        orders = pools["_orders"][0]
        order = orders[rnd.choice(pools["order_id"])]
        ids = [i["item_id"] for i in order["items"]]
        if arg == "item_ids":
            return rnd.sample(ids, k=min(len(ids), rnd.choice([1, 1, 2])))
        return [rnd.choice(pools["item_id"])]
    if domain == "telecom" and arg == "line_id" and rnd.random() < 0.7:
        customer = rnd.choice(pools["_customers"][0])
        return rnd.choice(customer["line_ids"]) if customer["line_ids"] else rnd.choice(pools["line_id"])
    if arg in pools:
        return copy.deepcopy(rnd.choice(pools[arg]))
    raise KeyError(f"no pool for {domain}.{name}.{arg}")


def _drawn_arguments(pools: dict[str, list[Any]], domain: str, name: str, signature: dict[str, bool],
                     examples: list[dict[str, Any]], rnd: random.Random) -> dict[str, Any]:
    """Every required argument (and some optional ones) drawn from the database; arguments with
    no pool (a list of flights, passengers) come from one of the tool's gold actions."""
    base = copy.deepcopy(rnd.choice(examples)) if examples else {}
    args: dict[str, Any] = {}
    for arg, required in signature.items():
        if not required and rnd.random() < 0.5:
            continue
        if arg in pools or (domain == "retail" and arg in ("item_ids", "new_item_ids")):
            if arg in base and rnd.random() < 0.4:
                args[arg] = base[arg]
            else:
                args[arg] = _draw(pools, domain, name, arg, rnd)
        elif arg in base:
            args[arg] = base[arg]
        elif required:
            raise KeyError(f"no pool and no gold example for {domain}.{name}.{arg}")
    return args


# ----------------------------------------------------------------------------- mutations


def _unknown(value: Any) -> Any:
    if isinstance(value, str):
        return value + "9Z" if value else "ZZ999"
    if isinstance(value, list):
        return [_unknown(v) for v in value] or ["ZZ999"]
    return value


def _wrong_type(value: Any, rnd: random.Random) -> Any:
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, (int, float)):
        return rnd.choice([str(value), [value], None])
    if isinstance(value, str):
        return rnd.choice([123, [value], None, {"value": value}])
    if isinstance(value, list):
        return rnd.choice([",".join(map(str, value)) if all(isinstance(v, str) for v in value) else "x", {"items": value}])
    if isinstance(value, dict):
        return rnd.choice([json.dumps(value), [value]])
    return "x"


ID_ARGS = {"user_id", "reservation_id", "flight_number", "payment_id", "order_id", "product_id", "payment_method_id",
           "customer_id", "line_id", "phone_number", "bill_id", "id", "email", "item_ids", "new_item_ids", "app_name"}


def _mutations(case: Case, signature: dict[str, bool], rnd: random.Random) -> Iterator[Case]:
    args = case.arguments
    required = [a for a, req in signature.items() if req and a in args]
    if required:
        drop = rnd.choice(required)
        yield Case(case.domain, case.task, case.requestor, case.name, {k: v for k, v in args.items() if k != drop}, "missing")
    yield Case(case.domain, case.task, case.requestor, case.name, {**args, "note": "please hurry"}, "extra")
    if args:
        key = rnd.choice(sorted(args))
        yield Case(case.domain, case.task, case.requestor, case.name, {**args, key: _wrong_type(args[key], rnd)}, "wrong_type")
    ids = [a for a in sorted(args) if a in ID_ARGS]
    if ids:
        key = rnd.choice(ids)
        yield Case(case.domain, case.task, case.requestor, case.name, {**args, key: _unknown(args[key])}, "unknown_id")


# ----------------------------------------------------------------------------- the cases


def _gold(domain: str, tasks: list[int]) -> list[Case]:
    out, seen = [], set()
    for index in tasks:
        task = task_dicts(domain)[index]
        actions = ((task.get("evaluation_criteria") or {}).get("actions")) or []
        state = index if task.get("initial_state") else None
        for action in actions:
            requestor = action.get("requestor") or "assistant"
            key = (state, requestor, action["name"], json.dumps(action.get("arguments") or {}, sort_keys=True))
            if key in seen:
                continue
            seen.add(key)
            out.append(Case(domain, state, requestor, action["name"], action.get("arguments") or {}, "gold"))
    return out


def generate(domain: str, seed: int = 0, per_tool: int = 6, gold_tasks: int | None = None, mutate: float = 0.5) -> list[Case]:
    """The suite's calls for one domain: gold actions, drawn calls for every tool, and mutations
    of both. `per_tool` drawn calls per tool; `gold_tasks` caps how many tasks give gold actions
    (telecom has 2,285; they are sampled); `mutate` is the share of calls that are also sent
    mutated (missing, extra, wrong-type and unknown-id variants)."""
    rnd = random.Random(f"conformance/{domain}/{seed}")
    signatures = tool_signatures(domain)
    pools = _pools(domain)
    n_tasks = len(task_dicts(domain))
    indexes = list(range(n_tasks))
    if gold_tasks is not None and gold_tasks < n_tasks:
        indexes = sorted(rnd.sample(indexes, gold_tasks))
    cases = _gold(domain, indexes)
    # telecom's phone tools need a phone: run them in the initial states of sampled tasks
    states: list[int | None] = [None]
    if domain == "telecom":
        states = rnd.sample(range(n_tasks), 12)
    examples: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for case in _gold(domain, range(n_tasks)):
        examples.setdefault((case.requestor, case.name), []).append(case.arguments)
    drawn: list[Case] = []
    for (requestor, name), signature in sorted(signatures.items()):
        for i in range(per_tool):
            state = states[i % len(states)] if requestor == "user" or domain == "telecom" else None
            if domain == "telecom" and requestor == "assistant" and i % 2 == 0:
                state = None
            args = _drawn_arguments(pools, domain, name, signature, examples.get((requestor, name), []), rnd)
            drawn.append(Case(domain, state, requestor, name, args, "valid"))
    cases += drawn
    mutated: list[Case] = []
    for case in cases:
        if rnd.random() < mutate:
            mutated.extend(_mutations(case, signatures[(case.requestor, case.name)], rnd))
    cases += mutated
    cases.append(Case(domain, None, "assistant", "get_everything", {}, "unknown_tool"))
    if domain == "telecom":
        cases.append(Case(domain, states[0], "user", "open_settings_app", {}, "unknown_tool"))
        # the agent asking for a phone tool, and the customer asking for an agent tool
        cases.append(Case(domain, states[0], "assistant", "toggle_airplane_mode", {}, "unknown_tool"))
        cases.append(Case(domain, states[0], "user", "get_customer_by_id", {"customer_id": "C1001"}, "unknown_tool"))
    return cases
