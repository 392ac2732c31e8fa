"""What the adapters share beyond `PolicyGate`: the sentence for a missing extra, and a policy for
tools that no shipped domain describes (an MCP server of one's own) built from a few declarations.

A policy module is a Python file or module with `build()` returning a `Domain` (as every domain
package has), or a `domain` attribute; `policy()` builds one from reads, writes and predicates.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterable, Mapping

from pydantic import BaseModel, ConfigDict

from ledger_tui.engine.domain import Domain, PathMap, Tool, Touches
from ledger_tui.engine.errors import LedgerTuiError

EXTRAS = {"agents": "agents", "mcp": "mcp", "inspect": "inspect_ai"}


class MissingExtra(LedgerTuiError, ImportError):
    """An adapter's framework is not installed."""

    def __init__(self, extra: str, framework: str) -> None:
        super().__init__(f"This needs {framework}, which is not installed; run: pip install 'ledger-tui[{extra}]'.")


def require(extra: str, framework: str) -> ModuleType:
    """Import the framework's top module, or raise `MissingExtra` naming the extra to install."""
    try:
        return importlib.import_module(EXTRAS[extra])
    except ImportError:
        raise MissingExtra(extra, framework) from None


class AnyArguments(BaseModel):
    """Arguments of a tool that the policy takes as they come (its server validates them)."""

    model_config = ConfigDict(extra="allow")


def _not_here(db: Any, args: Any) -> Any:
    raise LedgerTuiError("This policy's tools run on their own server; the gate only judges them.")


def policy(
    name: str,
    *,
    reads: Mapping[str, PathMap],
    writes: Mapping[str, Touches],
    predicates: Iterable[Any] = (),
    clock: str = "",
    text: str = "",
    identifies: Mapping[str, Callable[[dict[str, Any], Any], str | None]] | None = None,
) -> Domain:
    """A domain for tools served elsewhere: each read with its path map (`(arguments, result) ->
    (path, value) pairs`), each write with the paths it touches (templates over its arguments),
    the predicates over them (`ledger_tui.engine.gate.predicate`). Any other tool is unknown to
    the gate, which refuses it."""
    who = identifies or {}
    tools = [
        Tool(name=n, kind="read", args=AnyArguments, run=_not_here, description="", absorbs=m, identifies=who.get(n))
        for n, m in reads.items()
    ] + [Tool(name=n, kind="write", args=AnyArguments, run=_not_here, description="", touches=t) for n, t in writes.items()]
    return Domain(
        name=name, title=name, folder=Path.cwd(), db_model=BaseModel, tools=tools, predicates=list(predicates),
        clock=clock, policy_override=text,
    )


def load_policy(spec: str) -> Domain:
    """The domain a policy module declares: `spec` is a .py file or an importable module name."""
    path = Path(spec)
    try:
        if path.suffix == ".py":
            if not path.is_file():
                raise LedgerTuiError(f"Policy file {spec} does not exist; pass --policy a .py file or a module name.")
            found = importlib.util.spec_from_file_location(f"ledger_tui_policy_{path.stem}", path)
            assert found is not None and found.loader is not None
            module = importlib.util.module_from_spec(found)
            found.loader.exec_module(module)
        else:
            module = importlib.import_module(spec)
    except LedgerTuiError:
        raise
    except ImportError as exc:
        raise LedgerTuiError(f"Cannot import the policy module {spec} ({exc}); pass --policy a .py file or a module name.") from None
    except Exception as exc:  # the user's module raised while loading
        raise LedgerTuiError(f"The policy module {spec} failed to load ({type(exc).__name__}: {exc}); fix it and run again.") from None
    made = module.build() if callable(getattr(module, "build", None)) else getattr(module, "domain", None)
    if not isinstance(made, Domain):
        raise LedgerTuiError(
            f"The policy module {spec} declares no domain; give it build() returning ledger_tui.adapters.policy(...)."
        )
    return made
