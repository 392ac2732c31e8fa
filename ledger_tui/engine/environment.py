"""The environment: a private copy of a domain's database and the tools that act on it.

Bad calls never raise out of here: an unknown tool, arguments that do not validate, or a tool that
refuses all come back as an error result the model reads (`Error: …`), as in τ²-bench.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ledger_tui.engine.domain import Domain, Tool
from ledger_tui.engine.events import ToolCall
from ledger_tui.engine.cow import reading
from ledger_tui.engine.serialize import jsonable, tool_text


@dataclass(frozen=True)
class Outcome:
    content: str
    error: bool
    value: Any = None  # the raw return of a successful call (for the ledger's path map)
    tool: Tool | None = None


class Environment:
    def __init__(self, domain: Domain, db: Any | None = None, db_path: Path | None = None) -> None:
        self.domain = domain
        self.db = db if db is not None else domain.session_db(db_path)
        if domain.sync is not None:
            domain.sync(self.db)
        # memo of the digests, dropped by any call that may change state
        self._digests: tuple[str, str | None] | None = None

    def execute(self, call: ToolCall) -> Outcome:
        requestor = "user" if call.requestor == "user" else "assistant"
        tool = self.domain.tool(call.name, requestor)
        if tool is None:
            if requestor == "user" and not self.domain.user_tools:
                return Outcome("Error: user tools are not available in this domain", True)
            return Outcome(f"Error: Tool '{call.name}' not found.", True)
        try:
            args = tool.args.model_validate(call.arguments)
        except ValidationError as exc:
            lines = [
                f"{'.'.join(str(x) for x in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()[:6]
            ]
            return Outcome(f"Error: invalid arguments for {call.name}: " + "; ".join(lines), True, tool=tool)
        if tool.kind != "read" or self.domain.sync is not None:
            self._digests = None
        try:
            if tool.kind == "read":
                with reading(self.db):
                    value = tool.run(self.db, args)
                    text = tool_text(value)  # serialised before shared records leave the read
                    value = jsonable(value)
                return self._finish(text, value, tool)
            value = tool.run(self.db, args)
        except Exception as exc:  # ToolError and anything a tool raises: the model reads it
            return Outcome(f"Error: {exc}", True, tool=tool)
        return self._finish(tool_text(value), value, tool)

    def _finish(self, text: str, value: Any, tool: Tool) -> Outcome:
        if self.domain.sync is not None:
            try:
                self.domain.sync(self.db)
            except Exception as exc:
                return Outcome(f"Error: {exc}", True, tool=tool)
        return Outcome(text, False, value=value, tool=tool)

    def touched(self) -> None:
        """The db was changed from outside `execute` (task set-up): forget cached digests."""
        self._digests = None

    def digests(self) -> tuple[str, str | None]:
        """Agent and user db digests; recomputed only after a call that may have changed state
        (an untouched copy-on-write db answers from its pristine copy's digest)."""
        if self._digests is None:
            self._digests = self.domain.digests(self.db)
        return self._digests
