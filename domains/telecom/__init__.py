"""Telecom: a mobile carrier's support desk with dual control (the customer acts on their own phone).

The environment's db is a `TelecomState` holding the carrier's records (τ²-bench's agent db) and
the customer's phone (τ²-bench's user db); every successful call, by the agent or the customer, is
followed by the sync step that carries facts between the two.
"""

from __future__ import annotations

from pathlib import Path

from ledger_tui.engine.domain import Domain

from . import device, paths, predicates, state, tools
from .schema import KEYED, TelecomState

CLOCK = "2025-02-25"


def build() -> Domain:
    from ledger_tui.domains.telecom import proposals
    return Domain(
        toolkit="TelecomTools",
        user_toolkit="TelecomUserTools",
        name="telecom",
        title="Telecom (dual control)",
        folder=Path(__file__).parent,
        db_model=TelecomState,
        keyed=KEYED,
        tools=tools.TOOLS,
        predicates=predicates.PREDICATES,
        not_gated=predicates.NOT_GATED,
        clock=CLOCK,
        statements=predicates.STATEMENTS,
        questions=predicates.QUESTIONS,
        user_tools=device.USER_TOOLS,
        load_db_hook=state.load_state,
        db_files_hook=state.state_files,
        digests_hook=state.digests,
        sync=state.sync,
        init_task=state.init_task,
        check_assertion=state.run_assertion,
        identify_hint=paths.identify_hint,
        identity_sentence=paths.identity_sentence,
        proposal_terms=proposals.terms,
        card_details=proposals.card,
        sources=paths.SOURCES,
        read_gate=paths.READ_GATE,
    )
