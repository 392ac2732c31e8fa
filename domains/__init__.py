"""The domains ledger-tui ships: one sub-package each, found by name.

Every domain folder has the same files (see README, "Adding a domain"): `schema.py` (pydantic db),
`tools.py` (the tool table), `paths.py` (path map, touched paths, identification, read sources),
`predicates.py` (the policy as code, and what the customer may state), `policy.md`, `generate.py`
(seeded generator of `db.json`), `db.json`, `tasks.json`, and `scripts/` (scripted sessions).
`__init__.py` assembles them into a `Domain` with `build()`.
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from pathlib import Path

from ledger_tui.engine.domain import Domain
from ledger_tui.engine.errors import UnknownDomainError

HERE = Path(__file__).parent


def available() -> list[str]:
    return sorted(
        p.name for p in HERE.iterdir() if p.is_dir() and (p / "__init__.py").exists() and not p.name.startswith("_")
    )


@lru_cache(maxsize=None)
def load_domain(name: str) -> Domain:
    if name not in available():
        raise UnknownDomainError(name, available())
    module = importlib.import_module(f"{__name__}.{name}")
    return module.build()
