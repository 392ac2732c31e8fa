"""The airline policy as code: one predicate per rule of `policy.md`, each naming its clause.

Predicates read records from the ledger (`ctx.read` makes missing or stale evidence a REVISE with
the read that supplies it) and what the customer said from `said.*` (`ctx.stated`), never the
database. The rules are written by policy area, in `booking.py`, `changes.py`, `cancellation.py`
and `compensation.py` (with what they read alike in `facts.py`); this module declares the domain's
policy surface: the rules every write shares, PREDICATES (every predicate, in the order the gate
runs them), the clauses no predicate names (NOT_GATED), what the customer says (STATEMENTS) and
what the system asks (QUESTIONS).
"""

from __future__ import annotations

from ledger_tui.domains.airline import booking, cancellation, changes, compensation, proposals
from ledger_tui.domains.airline.facts import read_reservation
from ledger_tui.domains.airline.paths import reservation_path
from ledger_tui.engine import rules
from ledger_tui.engine.domain import Choice, Question, Statement, keyword_statement, said_as
from ledger_tui.engine.events import Verdict
from ledger_tui.engine.gate import Failure, GateContext, Predicate, predicate

WRITES = (
    "book_reservation",
    "cancel_reservation",
    "update_reservation_baggages",
    "update_reservation_flights",
    "update_reservation_passengers",
    "send_certificate",
)
RESERVATION_WRITES = (
    "cancel_reservation",
    "update_reservation_baggages",
    "update_reservation_flights",
    "update_reservation_passengers",
)


# ---------------------------------------------------------------------------- everywhere

customer_identified = rules.identified(
    "identity.user-id", "ask for the user id and look it up with get_user_details", tools=WRITES
)
one_customer = rules.one_customer("identity.one-customer", tools=WRITES)
reservation_owned = rules.owned_by_customer(
    "identity.ownership",
    RESERVATION_WRITES,
    record_path=lambda a: reservation_path(a["reservation_id"]) if a.get("reservation_id") else None,
    owner_of=lambda record: record.get("user_id"),
    what="reservation",
)
explicit_confirmation = rules.confirmed("confirm.explicit-yes", WRITES, proposals.terms)


@predicate(
    "acts_for_identified_customer",
    clause="identity.ownership",
    on_fail=Verdict.BLOCK,
    tools=("book_reservation", "send_certificate"),
    reads=("users.current",),
)
def acts_for_identified_customer(ctx: GateContext) -> Failure | None:
    """A booking or certificate is for the identified customer's own account."""
    me = ctx.user_id()
    target = ctx.arguments.get("user_id")
    if me is None:
        return ctx.fail("No customer is identified yet.", verdict=Verdict.REVISE)
    if target != me:
        return ctx.fail(
            f"The call is for user {target}, but the identified customer is {me}.",
            "Only act on the identified customer's own account.",
        )
    return None


@predicate(
    "reservation_not_cancelled",
    clause="reservation.active",
    on_fail=Verdict.BLOCK,
    tools=RESERVATION_WRITES,
    reads=("reservations.{reservation_id}",),
)
def reservation_not_cancelled(ctx: GateContext) -> Failure | None:
    """A cancelled reservation cannot be changed or cancelled again."""
    res = read_reservation(ctx)
    if res.get("status") == "cancelled":
        return ctx.fail(f"Reservation {res['reservation_id']} is already cancelled.", "Nothing more can be done with it.")
    return None


PREDICATES: list[Predicate] = [
    customer_identified,
    one_customer,
    reservation_owned,
    acts_for_identified_customer,
    explicit_confirmation,
    reservation_not_cancelled,
    booking.booking_passengers_valid,
    booking.booking_flights_available,
    booking.booking_payment_valid,
    booking.booking_bags_counted,
    changes.flight_change_not_basic_economy,
    changes.flight_change_same_route,
    changes.new_flights_available,
    changes.update_payment_method,
    changes.cabin_change_nothing_flown,
    changes.baggage_only_added,
    changes.bags_priced_from_allowance,
    changes.bags_the_customer_wants,
    changes.same_passenger_count,
    cancellation.cancel_reason_asked,
    cancellation.cancel_nothing_flown,
    cancellation.cancel_eligible,
    compensation.compensation_requested,
    compensation.certificate_eligible,
    compensation.certificate_amount,
]

# Clauses of policy.md no predicate names, each with why (`ledger-tui check-domain` reads this).
NOT_GATED: dict[str, str] = {
    "evidence.fresh": (
        "No predicate of its own: the gate applies it inside every predicate, whose ctx.read answers "
        "REVISE for a record never read or made stale by a write; an agent's words built on an unread "
        "record are text, which the gate does not check."
    ),
}


# ---------------------------------------------------------------------------- what the customer says

RESERVATION_ID = r"\b(?!HAT\d)[A-Z0-9]{6}\b"

STATEMENTS: list[Statement] = [
    keyword_statement(
        "cancel_reason",
        "Why the customer wants to cancel: health, weather, airline_cancelled, change_of_plan or other.",
        {
            "health": ("sick", "ill", "illness", "unwell", "not feeling well", "not feeling good", "feel awful",
                       "feeling poorly", "under the weather", "came down with", "health", "hospital", "hospitalized",
                       "hospitalised", "medical", "surgery", "operation", "injury", "injured", "doctor", "pregnant",
                       "pregnancy", "covid", "fever", "flu", "infection", "food poisoning", "migraine", "broke my",
                       "broken", "fracture", "fractured", "diagnosed", "diagnosis", "emergency room", "my condition",
                       "malade", "sante", "enfermo", "enferma", "salud", "krank", "gesundheit", "malato", "malata",
                       "salute", "doente", "saude"),
            "weather": ("weather", "storm", "hurricane", "blizzard", "snowstorm", "snow", "flood", "flooding",
                        "tornado", "typhoon", "cyclone", "volcanic", "heavy rain", "ice storm", "wildfire",
                        "meteo", "tempete", "tormenta", "huracan", "clima", "wetter", "sturm", "unwetter",
                        "tempesta", "maltempo", "tempestade"),
            "airline_cancelled": ("flight was cancelled", "flight got cancelled", "flight has been cancelled",
                                  "you cancelled", "airline cancelled", "cancelled by the airline",
                                  "flight was canceled", "airline canceled", "you canceled", "cancelled my flight",
                                  "canceled my flight"),
            "change_of_plan": ("change of plan", "change of plans", "plans changed", "plans have changed",
                               "plans fell through", "no longer need", "do not need", "can not make it",
                               "no longer going", "not going anymore", "not traveling anymore",
                               "not travelling anymore", "no longer traveling", "no longer travelling",
                               "changed my mind", "trip is off", "trip got cancelled", "event was cancelled",
                               "rescheduled", "postponed", "called off", "will not be going", "can not go",
                               "changement de programme", "cambio de planes", "planaenderung", "planänderung",
                               "cambio di programma", "mudanca de planos"),
            "other": ("personal reasons", "personal reason", "other reason", "other reasons", "family reasons",
                      "rather not say", "prefer not to say", "by accident", "by mistake", "booked the wrong",
                      "wrong date", "wrong flight", "double booked", "found a cheaper", "found a better",
                      "can not afford", "too expensive", "financial", "work", "family"),
        },
        records=RESERVATION_ID,
        examples={"health": "I'm not feeling well.", "weather": "There is a big storm coming.",
                  "airline_cancelled": "The airline cancelled my flight.", "change_of_plan": "My plans changed.",
                  "other": "It's for personal reasons."},
        neutral="other",
    ),  # fmt: skip
    keyword_statement(
        "compensation_requested",
        "The customer asked to be compensated (certificate, voucher, compensation).",
        {"yes": ("compensation", "compensate", "compensated", "voucher", "for the trouble", "for the inconvenience",
                 "make up for", "make it up", "make this right", "goodwill", "gesture", "indemnisation",
                 "dedommagement", "compensacion", "entschadigung", "entschaedigung", "risarcimento",
                 "indennizzo", "compensacao")},
        examples={"yes": "I would like some compensation for this."},
    ),  # fmt: skip
    keyword_statement(
        "bags_needed",
        "Whether the customer wants checked bags; no when they say they don't need any.",
        {
            "no": ("carry-on only", "only carry-on", "only a carry-on", "just a carry-on", "only hand luggage",
                   "just hand luggage", "only a backpack", "just a backpack"),
            "yes": ("bag", "bags", "checked bag", "checked bags", "luggage", "baggage", "suitcase", "suitcases",
                    "bagage", "bagages", "valise", "maleta", "maletas", "equipaje", "koffer", "gepack", "gepaeck",
                    "valigia", "valigie", "bagaglio", "bagagli", "mala", "malas", "bagagem"),
        },
        negated="no",
    ),  # fmt: skip
]


# ---------------------------------------------------------------------------- what the system asks


# The policy's reasons for a cancellation (cancel.reason), plus "another reason, or not sure": in
# consent mode card the system asks this of each reservation cancelled, and the answer decides
# cancel.eligibility for an insured one. The phrases name a choice in a reply (questions.py).
QUESTIONS: list[Question] = [
    Question(
        key="cancel_reason",
        record="reservation_id",
        ask="Why do you want to cancel reservation {record}?",
        tools=("cancel_reservation",),
        choices=(
            Choice("change_of_plan", "My plans changed: I no longer need this trip", said_as(
                "change of plan|change of plans|changed plans|plans changed|my plans changed|plans have changed|"
                "plans fell through|changed my mind|no longer need|do not need|not need it|not needed|"
                "can not make it|cannot make it|will not make it|no longer going|not going anymore|"
                "no longer travelling|no longer traveling|not travelling anymore|not traveling anymore|trip is off|"
                "trip got cancelled|event was cancelled|meeting is cancelled|called off|postponed|rescheduled",
                "changement de programme|changement de plans|cambio de planes|cambio de plan|planaenderung|"
                "plane haben sich geandert|cambio di programma|cambio di piani|mudanca de planos|mudanca de plano",
            )),
            Choice("airline_cancelled", "The airline cancelled one of its flights", said_as(
                "airline cancelled|airline canceled|cancelled by the airline|canceled by the airline|"
                "flight was cancelled|flight was canceled|flight got cancelled|flight got canceled|"
                "flight has been cancelled|flight has been canceled|you cancelled|you canceled|"
                "cancelled my flight|canceled my flight|your cancellation|the airline cancelled",
                "vol annule|vuelo cancelado|flug wurde gestrichen|flug annulliert|volo cancellato|voo cancelado",
            )),
            Choice("health", "Health: I or someone travelling on it is ill or injured", said_as(
                "health|health reason|health reasons|sick|ill|illness|unwell|not feeling well|feeling unwell|"
                "came down with|flu|covid|fever|infection|food poisoning|injured|injury|hurt|broke my|broken leg|"
                "broken arm|fracture|fractured|surgery|hospital|hospitalized|hospitalised|medical|diagnosed|"
                "pregnant|pregnancy|migraine",
                "malade|sante|blesse|enfermo|enferma|salud|herido|krank|gesundheit|verletzt|malato|malata|salute|"
                "ferito|doente|saude|ferido",
            )),
            Choice("weather", "Bad weather where it flies", said_as(
                "weather|bad weather|storm|hurricane|blizzard|snowstorm|snow storm|flood|flooding|tornado|typhoon|"
                "cyclone|heavy rain|ice storm|wildfire|volcanic",
                "meteo|tempete|ouragan|tormenta|huracan|mal tiempo|clima|wetter|sturm|unwetter|orkan|tempesta|"
                "maltempo|uragano|tempestade|furacao|mau tempo",
            )),
            Choice("other", "Another reason, or I'd rather not say", said_as(
                "other|another reason|other reason|other reasons|something else|personal reasons|personal reason|"
                "rather not say|prefer not to say|not sure|unsure|do not know|no idea|by mistake|by accident|"
                "booked the wrong|wrong date|wrong flight|double booked|found a cheaper|found a better|too expensive|"
                "can not afford|cannot afford",
                "autre|autre raison|raisons personnelles|otra|otra razon|motivos personales|andere|anderer grund|"
                "personliche grunde|altro|altra ragione|motivi personali|outro|outra razao|motivos pessoais",
            )),
        ),
    ),
]  # fmt: skip
