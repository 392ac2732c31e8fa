"""The airline policy on compensation (`certificate.*` in `policy.md`): a certificate only when
the customer asks, for an eligible member and disruption, of the policy's amount.

One predicate per rule, each naming its clause; `predicates.py` lists them in PREDICATES.
"""

from __future__ import annotations

from typing import Any

from ledger_tui.domains.airline.facts import any_observed, as_written, flight_keys
from ledger_tui.domains.airline.paths import flight_path, reservation_path, user_path
from ledger_tui.engine.events import SuggestedCall, Verdict
from ledger_tui.engine.gate import Failure, GateContext, predicate


def _disruptions(ctx: GateContext, user_id: str) -> tuple[list[tuple[dict[str, Any], str, tuple[str, str]]], Failure | None]:
    """(reservation, 'cancelled'|'delayed', segment) for the user's observed reservations."""
    found = []
    unknown: SuggestedCall | None = None
    mine: list[dict[str, Any]] = []
    for path in ctx.ledger.where("reservations.", "user_id", user_id):  # theirs only, as evidence
        res = any_observed(ctx, path)
        mine.append(res)
        for seg in res.get("flights", []):
            entry = any_observed(ctx, flight_path(seg["flight_number"], seg["date"]))
            if entry is None:
                unknown = unknown or SuggestedCall(name="get_flight_status", arguments={"flight_number": seg["flight_number"], "date": seg["date"]})
                continue
            if entry.get("status") in ("cancelled", "delayed"):
                found.append((res, entry["status"], (seg["flight_number"], seg["date"])))
    if not found and len(mine) == 1:
        # A changed itinerary no longer lists the disrupted flight; with one reservation in view,
        # a disrupted flight read in this conversation and absent from it belongs to it.
        listed = {(s["flight_number"], s["date"]) for s in mine[0].get("flights", [])}
        disrupted = ctx.ledger.where("flights.", "status", "cancelled") + ctx.ledger.where("flights.", "status", "delayed")
        for path in sorted(disrupted):
            entry = any_observed(ctx, path)
            number, date = path.split(".")[1:3]
            if (number, date) not in listed:
                found.append((mine[0], entry["status"], (number, date)))
    if found:
        return found, None
    if unknown is not None:
        return [], GateContext.needs("The status of the customer's flights has not been checked.", unknown)
    if not mine:
        profile = ctx.peek(user_path(user_id)) or {}
        unread = [r for r in profile.get("reservations") or [] if ctx.ledger.get(reservation_path(r)) is None]
        if unread:
            return [], GateContext.needs(
                "None of the customer's reservations has been read, so no disruption is on record.",
                SuggestedCall(name="get_reservation_details", arguments={"reservation_id": unread[0]}),
            )
        return [], Failure(
            "None of the customer's reservations has been read, so no disruption is on record.",
            "Read the reservation the complaint is about with get_reservation_details.",
            verdict=Verdict.REVISE,
        )
    return [], Failure("No flight of the customer's reservations was cancelled or delayed.", "No compensation applies.")


@predicate("compensation_requested", clause="certificate.requested", on_fail=Verdict.BLOCK, tools=("send_certificate",), reads=("said.compensation_requested",))
def compensation_requested(ctx: GateContext) -> Failure | None:
    """A certificate is sent only when the customer asks for compensation."""
    if not ctx.stated("compensation_requested"):
        return ctx.inferred("The customer has not asked for compensation.", "Do not offer compensation unprompted.")
    return None


@predicate(
    "certificate_eligible",
    clause="certificate.eligibility",
    on_fail=Verdict.BLOCK,
    tools=("send_certificate",),
    reads=("users.{user_id}", "reservations.{reservation_id}", "flights.{flight_number}.{date}"),
)
def certificate_eligible(ctx: GateContext) -> Failure | None:
    """Silver and gold members, insured reservations and business reservations may be compensated
    for a cancelled or delayed flight; regular members in (basic) economy without insurance not."""
    user_id = ctx.arguments["user_id"]
    user = ctx.read(user_path(user_id))
    found, problem = _disruptions(ctx, user_id)
    if problem:
        return problem
    if user.get("membership") in ("silver", "gold"):
        return None
    if any(res.get("insurance") == "yes" or res.get("cabin") == "business" for res, _, _ in found):
        return None
    return ctx.fail(
        f"{user_id} is a regular member and the disrupted reservation is uninsured and not business; no certificate applies.",
        "Apologise; compensation is not available here.",
    )


@predicate(
    "certificate_amount",
    clause="certificate.amount",
    on_fail=Verdict.REVISE,
    tools=("send_certificate",),
    reads=("reservations.{reservation_id}", "flights.{flight_number}.{date}"),
)
def certificate_amount(ctx: GateContext) -> Failure | None:
    """$100 per passenger for a cancelled flight; $50 per passenger for a delayed one, once the
    requested change or cancellation is done."""
    found, problem = _disruptions(ctx, ctx.arguments["user_id"])
    if problem:
        return problem
    amount = ctx.arguments["amount"]
    allowed, pending = set(), set()
    for res, kind, seg in found:
        n = len(res["passengers"])
        if kind == "cancelled":
            allowed.add(100 * n)
            continue
        ev = ctx.recall(reservation_path(res["reservation_id"]))
        done = ev.stale or res.get("status") == "cancelled" or seg not in flight_keys(res["flights"])
        (allowed if done else pending).add(50 * n)
    if amount in allowed:
        return None
    if amount in pending:
        return ctx.fail(
            "Compensation for a delay is given after the customer's change or cancellation is done.",
            "Make the change or cancellation first, read the reservation again, then send the certificate.",
        )
    expect = ", ".join(as_written(x) for x in sorted(allowed | pending)) or "none"
    return ctx.fail(f"A certificate of {as_written(amount)} does not match the rule (expected: {expect}).", f"Send exactly {expect}.")
