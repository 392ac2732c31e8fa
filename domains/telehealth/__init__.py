"""Telehealth: a virtual front desk for video appointments, prescription suppliers and record
notes. This project's own database, modelled on τ-Trait's telehealth domain (not τ²-bench data)."""

from __future__ import annotations

from pathlib import Path

from ledger_tui.engine.domain import Domain


def build() -> Domain:
    from domains.telehealth import proposals
    from domains.telehealth import paths
    from domains.telehealth.predicates import PREDICATES, STATEMENTS
    from domains.telehealth.schema import KEYED, TelehealthDB
    from domains.telehealth.slots import NOW
    from domains.telehealth.tools import TOOLS

    return Domain(
        toolkit="TelehealthTools",
        name="telehealth",
        title="Telehealth front desk",
        folder=Path(__file__).parent,
        db_model=TelehealthDB,
        keyed=KEYED,
        tools=TOOLS,
        predicates=PREDICATES,
        clock=NOW,
        statements=STATEMENTS,
        sources=paths.SOURCES,
        identify_hint=paths.identify_hint,
        identity_sentence=paths.identity_sentence,
        proposal_terms=proposals.terms,
    )
