"""Telehealth: a virtual front desk for video appointments, prescription suppliers and record
notes. This project's own database, modelled on τ-Trait's telehealth domain (not τ²-bench data)."""

from __future__ import annotations

from pathlib import Path

from ledger_tui.engine.domain import Domain


def build() -> Domain:
    from ledger_tui.domains.telehealth import proposals
    from ledger_tui.domains.telehealth import paths
    from ledger_tui.domains.telehealth.predicates import NOT_GATED, PREDICATES, STATEMENTS
    from ledger_tui.domains.telehealth.schema import KEYED, TelehealthDB
    from ledger_tui.domains.telehealth.slots import NOW
    from ledger_tui.domains.telehealth.tools import TOOLS

    return Domain(
        toolkit="TelehealthTools",
        name="telehealth",
        title="Telehealth front desk",
        folder=Path(__file__).parent,
        db_model=TelehealthDB,
        keyed=KEYED,
        tools=TOOLS,
        predicates=PREDICATES,
        not_gated=NOT_GATED,
        clock=NOW,
        statements=STATEMENTS,
        sources=paths.SOURCES,
        read_gate=paths.READ_GATE,
        identify_hint=paths.identify_hint,
        identity_sentence=paths.identity_sentence,
        proposal_terms=proposals.terms,
        card_details=proposals.card,
    )
