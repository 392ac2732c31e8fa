"""The retail domain: an online store's orders, returns and exchanges, τ²-bench compatible.

The tools, database and their effects match τ²-bench's retail domain, so its own db.json loads
here (`--db path/to/db.json`) and gives the same digests; the policy, data and tasks are this
project's own.
"""

from __future__ import annotations

from pathlib import Path

from ledger_tui.engine.domain import Domain

from . import paths
from .predicates import NOT_GATED, PREDICATES, STATEMENTS
from .schema import KEYED, RetailDB
from .tools import TOOLS

# No retail tool reads a clock; the gate context still needs a "now".
CLOCK = "2024-06-01T12:00:00"


def build() -> Domain:
    from ledger_tui.domains.retail import proposals
    return Domain(
        toolkit="RetailTools",
        name="retail",
        title="Retail: an online store's orders, returns and exchanges",
        folder=Path(__file__).parent,
        db_model=RetailDB,
        keyed=KEYED,
        tools=TOOLS,
        predicates=PREDICATES,
        not_gated=NOT_GATED,
        clock=CLOCK,
        statements=STATEMENTS,
        identify_hint=paths.identify_hint,
        identity_sentence=paths.identity_sentence,
        proposal_terms=proposals.terms,
        card_details=proposals.card,
        sources=paths.SOURCES,
        read_gate=paths.READ_GATE,
    )
