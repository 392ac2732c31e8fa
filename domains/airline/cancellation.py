"""The airline policy on cancelling a reservation (`cancel.*` in `policy.md`): the reason asked,
nothing flown, and who may cancel (within 24 hours, an airline cancellation, business, insurance).

One predicate per rule, each naming its clause; `predicates.py` lists them in PREDICATES.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from ledger_tui.domains.airline.facts import flight_status, flown_segments, read_reservation
from ledger_tui.domains.airline.tools import NOW
from ledger_tui.engine.events import Verdict
from ledger_tui.engine.gate import Failure, GateContext, predicate


@predicate(
    "cancel_reason_asked",
    clause="cancel.reason",
    on_fail=Verdict.REVISE,
    tools=("cancel_reservation",),
    reads=("answers.cancel_reason.{reservation_id}", "said.cancel_reason"),
)
def cancel_reason_asked(ctx: GateContext) -> Failure | None:
    """The customer gave a reason for cancelling: their answer to the system's question (consent
    mode card), else what the free-text reader found in their words."""
    rid = ctx.arguments["reservation_id"]
    if ctx.asks_questions:
        if ctx.answered("cancel_reason", rid) is None:
            return ctx.question("cancel_reason", rid, f"The customer has not said why they want to cancel {rid}.")
        return None
    if ctx.stated("cancel_reason", rid) is None:
        return ctx.inferred("The customer has not said why they want to cancel.", "Ask the customer for the reason of the cancellation.")
    return None


@predicate(
    "cancel_nothing_flown",
    clause="cancel.not-flown",
    on_fail=Verdict.BLOCK,
    tools=("cancel_reservation",),
    reads=("reservations.{reservation_id}", "flights.{flight_number}.{date}"),
)
def cancel_nothing_flown(ctx: GateContext) -> Failure | None:
    """A reservation with a segment already flown cannot be cancelled (transfer instead)."""
    res = read_reservation(ctx)
    flown = flown_segments(ctx, res["flights"])
    if flown:
        return ctx.fail(f"{', '.join(flown)} has already been flown; the trip cannot be cancelled.", "Transfer to a human agent if the customer insists.")
    return None


@predicate(
    "cancel_eligible",
    clause="cancel.eligibility",
    on_fail=Verdict.BLOCK,
    tools=("cancel_reservation",),
    reads=("reservations.{reservation_id}", "flights.{flight_number}.{date}", "answers.cancel_reason.{reservation_id}", "said.cancel_reason"),
)
def cancel_eligible(ctx: GateContext) -> Failure | None:
    """Booked in the last 24 hours, or an airline-cancelled segment, or business, or insured with a
    health or weather reason."""
    res = read_reservation(ctx)
    now = datetime.fromisoformat(ctx.context("now", ctx.session.now or NOW))
    if datetime.fromisoformat(res["created_at"]) >= now - timedelta(hours=24):
        return None
    if res["cabin"] == "business":
        return None
    rid = res["reservation_id"]
    asked = ctx.asks_questions and res["insurance"] == "yes"
    reason = ctx.answered("cancel_reason", rid) if asked else ctx.stated("cancel_reason", rid)
    if res["insurance"] == "yes" and reason in ("health", "weather"):
        return None
    if asked and reason is None:
        return ctx.question(
            "cancel_reason", rid, f"Reservation {rid} is insured: whether it can be cancelled depends on the customer's reason, which they have not given."
        )
    if res["insurance"] == "yes" and reason is None:
        return ctx.inferred(
            f"Reservation {res['reservation_id']} is insured: whether it can be cancelled depends on the customer's reason, which they have not given.",
            "Ask the customer why they want to cancel.",
            verdict=Verdict.REVISE,
        )
    for seg in res["flights"]:
        if flight_status(ctx, seg["flight_number"], seg["date"]) == "cancelled":
            return None
    why = (
        f"it was booked at {res['created_at']} (more than 24 hours ago), is {res['cabin']}, "
        + ("is insured but the reason is not health or weather" if res["insurance"] == "yes" else "has no insurance")
        + ", and no flight of it was cancelled by the airline"
    )
    # insured, it hinges on the reason: the customer's answer to the question (observed), or what
    # the free-text reader took from their words (inferred)
    refuse = ctx.inferred if res["insurance"] == "yes" and not asked else ctx.fail
    return refuse(f"Reservation {res['reservation_id']} cannot be cancelled: {why}.", "Explain the rule; offer a change instead if allowed.")
