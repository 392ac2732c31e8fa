"""The airline domain: τ²-bench's airline tools and data format, with its policy as gate predicates."""

from __future__ import annotations

from pathlib import Path

from ledger_tui.engine.domain import Domain


def build() -> Domain:
    from ledger_tui.domains.airline import proposals
    from ledger_tui.domains.airline import paths
    from ledger_tui.domains.airline.predicates import NOT_GATED, PREDICATES, QUESTIONS, STATEMENTS
    from ledger_tui.domains.airline.schema import KEYED, FlightDB
    from ledger_tui.domains.airline.tools import NOW, TOOLS

    return Domain(
        toolkit="AirlineTools",
        name="airline",
        title="Airline reservations",
        folder=Path(__file__).parent,
        db_model=FlightDB,
        keyed=KEYED,
        tools=TOOLS,
        predicates=PREDICATES,
        not_gated=NOT_GATED,
        clock=NOW,
        statements=STATEMENTS,
        questions=QUESTIONS,
        identify_hint=paths.identify_hint,
        identity_sentence=paths.identity_sentence,
        proposal_terms=proposals.terms,
        card_details=proposals.card,
        sources=paths.SOURCES,
        read_gate=paths.READ_GATE,
    )
