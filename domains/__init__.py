"""The domains: the ones ledger-tui ships (one sub-package each, found by name), and those other
packages register under the entry-point group `ledger_tui.domains` (`name = "module:build"`, or a
module with a `build()`; `ledger-tui new-domain NAME` writes one). A shipped name wins over a
plugin's; `ledger-tui domains` says where each came from.

Every domain folder has the same files (see README, "Adding a domain"): `schema.py` (pydantic db),
`tools.py` (the tool table), `paths.py` (path map, touched paths, identification, read sources),
`predicates.py` (the policy as code, and what the customer may state), `policy.md`, `generate.py`
(seeded generator of `db.json`), `db.json`, `tasks.json`, and `scripts/` (scripted sessions).
`__init__.py` assembles them into a `Domain` with `build()`.
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from ledger_tui.engine.errors import LedgerTuiError, UnknownDomainError

if TYPE_CHECKING:  # (built on the first load_domain: `why` reads only a policy's text, `policy_text`)
    from ledger_tui.engine.domain import Domain

HERE = Path(__file__).parent
ENTRY_POINTS = "ledger_tui.domains"


def shipped() -> list[str]:
    return sorted(
        p.name for p in HERE.iterdir() if p.is_dir() and (p / "__init__.py").exists() and not p.name.startswith("_")
    )


def plugins() -> dict[str, EntryPoint]:
    """Domains other packages register, by name (one a shipped domain's name is shadowed)."""
    found: dict[str, EntryPoint] = {}
    for ep in entry_points(group=ENTRY_POINTS):
        found.setdefault(ep.name, ep)
    return found


def available() -> list[str]:
    return sorted(set(shipped()) | set(plugins()))


def origin(name: str) -> str:
    """Where a domain comes from: `shipped (FOLDER)`, or `plugin DIST VERSION (module:build)`."""
    if name in shipped():
        return f"shipped ({HERE / name})"
    ep = plugins().get(name)
    if ep is None:
        raise UnknownDomainError(name, available())
    dist = f"{ep.dist.name} {ep.dist.version}" if ep.dist is not None else "an unnamed distribution"
    return f"plugin {dist} ({ep.value})"


def shadowed() -> dict[str, EntryPoint]:
    """Plugins named like a shipped domain: the shipped one is used."""
    ours = set(shipped())
    return {name: ep for name, ep in sorted(plugins().items()) if name in ours}


@lru_cache(maxsize=None)
def load_domain(name: str) -> Domain:
    if name in shipped():
        return importlib.import_module(f"{__name__}.{name}").build()
    ep = plugins().get(name)
    if ep is None:
        raise UnknownDomainError(name, available())
    from ledger_tui.engine.domain import Domain

    where = origin(name)
    try:
        loaded = ep.load()
        domain = loaded.build() if isinstance(loaded, ModuleType) else loaded()  # a module, or its build
    except LedgerTuiError:
        raise
    except Exception as exc:  # someone else's code: one sentence, never a traceback
        raise LedgerTuiError(
            f"Domain {name!r}, a {where}, failed to load ({type(exc).__name__}: {exc}); fix or reinstall that package, "
            "or uninstall it."
        ) from None
    if not isinstance(domain, Domain) or domain.name != name:
        got = f"a Domain named {domain.name!r}" if isinstance(domain, Domain) else type(domain).__name__
        raise LedgerTuiError(
            f"Domain {name!r}, a {where}, built {got}; its entry point must return the Domain named {name!r}."
        )
    return domain


def policy_text(name: str) -> str:
    """A domain's policy text. A shipped domain's is its folder's policy.md, read without building
    the domain: `why` quotes the policy and needs nothing else of it, and building telecom's imports
    its tools, predicates and schema (a fifth of `why`'s start-up). A plugin's is its Domain's."""
    if name in shipped():
        return (HERE / name / "policy.md").read_text(encoding="utf-8")
    return load_domain(name).policy


def domain_for(name: str | None) -> tuple[Domain | None, str]:
    """The domain a trajectory names, or None and one sentence saying why it is unavailable (the
    replay and the diff screens show a run whatever its domain's state)."""
    if not name:
        return None, "the trajectory does not name its domain"
    try:
        return load_domain(name), ""
    except LedgerTuiError as exc:
        return None, str(exc)
    except Exception as exc:  # a domain being written may not import yet
        return None, f"domain {name!r} could not be loaded ({type(exc).__name__}: {exc})"
