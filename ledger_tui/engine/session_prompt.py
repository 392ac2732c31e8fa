"""The prompt a session sends the model, fitted to the context window.

A part of `Session` (session.py), mixed into it: `_fit` builds the next prompt from the transcript
as the model sees it (`_view`: compacted with `--compact`, IRMA's rewrite of the customer's latest
message, what was folded) and, when the window is known and the prompt too long, folds tool results
the task state already holds, then the oldest turns (`model/context.py` says how). Kept apart
from the loop: it decides what the model reads, and returns the notices of a fold for the loop to
record.
"""

from __future__ import annotations

from typing import Any

from ledger_tui.engine.model import context
from ledger_tui.engine.model.context import Window
from ledger_tui.engine.errors import ContextWindowExceededError
from ledger_tui.engine.model.models import unwrap
from ledger_tui.engine.model.prompt import build_messages, message_tokens

IN_TASK_STATE = "(in task state)"


class PromptFitting:
    """Fit a `Session`'s prompt to the model's context window (the session sets the fields used)."""

    async def _known_window(self) -> Window | None:
        if not self._window_known:
            self._window_known = True
            self._window = await context.discover(self.model, self.context_window)
        return self._window

    def _view(self) -> list[dict[str, Any]]:
        """The transcript as it goes to the model: compacted (`--compact`), with what was folded."""
        view = self._compacted() if self.compact else list(self.transcript)
        if self._reformulated is not None:  # IRMA: the latest customer message as the helpers rewrote it
            index, text = self._reformulated
            view[index] = {**view[index], "content": text}
        if self._folded_results:
            view = [
                {**m, "content": IN_TASK_STATE} if m.get("role") == "tool" and m.get("tool_call_id") in self._folded_results else m
                for m in view
            ]
        if self._folded_turns:
            dropped = view[: self._folded_turns]
            kept = view[self._folded_turns :]
            kept[0] = {**kept[0], "content": context.folded_note(dropped) + str(kept[0].get("content") or "")}
            view = kept
        return view

    async def _measure(self, messages: list[dict[str, Any]], window: Window) -> int:
        tools = self.domain.tool_schemas()
        guess = context.estimate(messages, tools)
        counter = getattr(unwrap(self.model), "count_tokens", None)
        if guess < window.budget * context.LOW_WATER or counter is None:
            return guess
        counted = await counter(context.prompt_text(messages, tools))
        return guess if counted is None else counted + context.TEMPLATE_TOKENS * len(messages)

    async def _fit(self, block: str | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
        """The next prompt, folded to fit the context window when one is known; the notices of any
        fold. Raises ContextWindowExceededError when even folding leaves it too long."""
        view = self._view()
        messages = build_messages(self.system, view, block, self.ledger_at)
        window = await self._known_window()
        if window is None:
            return messages, view, []

        async def refold() -> int:  # the prompt again, after a fold; its size
            nonlocal view, messages
            view = self._view()
            messages = build_messages(self.system, view, block, self.ledger_at)
            return await self._measure(messages, window)

        size = await self._measure(messages, window)
        if size <= window.budget:
            return messages, view, []
        target = int(window.budget * context.LOW_WATER)
        notes = []
        if self.renders_ledger:  # 1. results the task state already holds
            folded = 0
            for m in self.transcript:
                call_id = m.get("tool_call_id") if m.get("role") == "tool" else None
                paths = self._absorbed.get(call_id or "")
                if call_id in self._folded_results or not paths or not all(p in self.state.ledger for p in paths):
                    continue
                if len(str(m.get("content") or "")) <= len(IN_TASK_STATE):
                    continue
                self._folded_results.add(call_id)  # type: ignore[arg-type]
                folded += 1
                size -= message_tokens(m)
                if size <= target:
                    break
            if folded:
                size = await refold()
                notes.append(
                    f"Folded {folded} tool result{'s' if folded > 1 else ''} the task state already holds, to fit the "
                    f"{window.tokens:,}-token context window ({window.source}); the prompt is now about {size:,} tokens."
                )
        if size > target:  # 2. the oldest turns, when folding results alone left no room to grow
            latest = max((i for i, m in enumerate(self.transcript) if m.get("role") == "user"), default=0)
            cuts = [c for c in context.foldable_turn_starts(self.transcript, latest + 1) if c > self._folded_turns]
            if cuts:
                chosen = cuts[-1]
                for c in cuts:
                    if size - sum(message_tokens(m) for m in self.transcript[self._folded_turns : c]) <= target:
                        chosen = c
                        break
                before = self._folded_turns
                self._folded_turns = chosen
                size = await refold()
                notes.append(
                    f"Folded the {chosen - before} oldest messages of the conversation to fit the {window.tokens:,}-token "
                    f"context window ({window.source}); the prompt is now about {size:,} tokens."
                )
        if size > window.budget:
            raise ContextWindowExceededError(
                f"The prompt needs about {size:,} tokens, more than the {window.tokens:,}-token context window leaves "
                f"after the {window.reserve:,}-token completion cap, even with the conversation folded; use a model "
                "with a larger window, or lower --max-tokens."
            )
        return messages, view, notes

    def _compacted(self) -> list[dict[str, Any]]:
        """The transcript as the model sees it in compact mode: results already in the rendered
        ledger become a reference, a write's result becomes a note once the records it changed
        were read again, and gate feedback becomes a note once a later call was allowed or the
        customer has spoken since (the agent acted on it then; the gate judges any retry anew)."""
        last_customer = max((i for i, m in enumerate(self.transcript) if m.get("role") == "user"), default=-1)
        out = []
        for i, message in enumerate(self.transcript):
            call_id = message.get("tool_call_id", "") if message.get("role") == "tool" else ""
            note = None
            paths = self._absorbed.get(call_id) if call_id else None
            if paths and all(p in self.state.ledger for p in paths):
                note = IN_TASK_STATE  # the call's arguments say which records
            elif call_id in self._resolved:
                note = "(gate feedback, since resolved)"
            elif call_id in self._refused and i < last_customer:
                note = "(gate feedback from an earlier turn)"
            elif call_id in self._written and all(self.state.ledger.fresh(p) for p in self._written[call_id]):
                note = "(done; read again into task state)"
            # a short result (an id, a yes) stays as it is: the note would cost more than it saves
            if note is not None and len(note) < len(message.get("content") or ""):
                message = {**message, "content": note}
            out.append(message)
        return out
