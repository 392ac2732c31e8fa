"""Why: one gate decision explained from its recorded evidence, plus a what-if to change the verdict.

Everything above the what-if panel comes from the decision as recorded (nothing re-runs). The
what-if rebuilds the state the gate saw with the fold, applies one edit (an argument or a ledger
value) and asks the domain's predicates again, showing the new verdict next to the old one.

A stop says whether it is a violation or only needs a read, a failed check that only lacks evidence
is marked so, and a stated fact shows the customer's words and the step of their message. The
wording is `ledger_tui.explain`'s, as in `ledger-tui why`, and none of it adds a line (issue 15).
"""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Input, Select, Static

from ledger_tui.engine.domain import Domain, clause_text
from ledger_tui.engine.events import EvidenceRead, GateDecided, GateDecision, PredicateResult
from ledger_tui.engine.fold import SessionState
from ledger_tui.engine.outside import shown
from ledger_tui.engine.serialize import compact
from ledger_tui.explain import category_label, check_label, stated_where, verdict_label
from ledger_tui.ui.whatif import Edit, editable_targets, what_if
from ledger_tui.ui.widgets.gate_log import row_class
from ledger_tui.ui.widgets.tool_call_item import WHO


INDENT = "\u00a0\u00a0"  # non-breaking, so wrapping keeps the indentation


def policy_clause(policy: str | None, clause: str) -> str:
    """The clause paragraph from policy.md, without markdown emphasis."""
    if not policy:
        return ""
    return clause_text(policy, clause).replace("**", "").strip()


def short(value: Any, limit: int = 200) -> str:
    text = compact(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def in_full(value: Any, indent: str, inline: int = 50) -> str:
    """A value shown whole: compact JSON when short, else pretty-printed (2-space indent) on its
    own lines under `indent`, so the field a rule used is never cut off."""
    text = compact(value)
    if len(text) <= inline or not isinstance(value, (dict, list)):
        return text
    pretty = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)
    lines = []
    for line in pretty.split("\n"):
        body = line.lstrip(" ")
        lines.append(indent + "\u00a0" * (len(line) - len(body)) + body)
    return "\n" + "\n".join(lines)


def describe_read(r: EvidenceRead) -> Text:
    """One evidence line: path = value, and where the value came from (which step, which call)."""
    if r.origin == "context":
        return Text(shown(f"{INDENT}context {r.path.removeprefix('context.')} = {in_full(r.value, INDENT * 2)}"), style="dim")
    if not r.present:
        return Text(shown(f"{INDENT}{r.path}: not in the ledger"), style="italic")
    line = Text(shown(f"{INDENT}{r.path}"))
    if r.stale:
        line.append(" STALE", style="bold")
    line.append(shown(f" = {in_full(r.value, INDENT * 2)}"))
    if r.origin == "stated":
        line.append(shown(f"\n{INDENT * 3}{stated_where(r)}"), style="dim")
    else:
        where = f"read at step {r.source_seq}" if r.source_seq is not None else "read"
        if r.source_call:
            where += f" by {r.source_call}"
        line.append(shown(f"\n{INDENT * 3}{where}"), style="dim")
    return line


def describe_predicate(p: PredicateResult, policy: str | None) -> Text:
    text = Text.assemble((f"[{check_label(p, ' → ')}] ", "bold"), (shown(p.name), "bold"), shown(f" · clause {p.clause}"))
    if not p.passed and p.reason:
        text.append(shown(f"\n{INDENT}reason: {p.reason}"))
    if not p.passed and p.hint:
        text.append(shown(f"\n{INDENT}hint: {p.hint}"))
    for r in p.reads:
        text.append("\n")
        text.append_text(describe_read(r))
    clause = policy_clause(policy, p.clause)
    if clause:
        text.append(shown(f"\n{INDENT}policy: {clause}"), style="italic")
    return text


def describe_outcome(before: GateDecision, outcome: GateDecision, edit: Edit) -> Text:
    """The what-if answer, most important first: the new verdict, the checks that flipped, the
    new reason, and last the edit that was tried (it is also still in the boxes above)."""
    kind = f" {category_label(outcome)}" if outcome.verdict.value != "ALLOW" else ""
    text = Text.assemble(("→ ", "bold"), (f" {outcome.verdict.value} ", "bold reverse"), f"{kind} (was {verdict_label(before)})")
    was = {p.name: p.passed for p in before.predicates}
    for p in outcome.predicates:
        if p.name in was and was[p.name] != p.passed:
            text.append(shown(f"\n{INDENT}{p.name}: "))
            text.append("FAIL→pass" if p.passed else "pass→FAIL", style="bold")
        elif p.name not in was:
            text.append(shown(f"\n{INDENT}{p.name}: "))
            text.append("now checked, " + ("pass" if p.passed else "FAIL"), style="bold")
    text.append(shown(f"\n{outcome.reason}"))
    text.append(shown(f"\nwhat-if {edit.target} {edit.key} = {short(edit.value, 120)}"), style="dim")
    return text


class WhyScreen(Screen[None]):
    """Enter on a gate log row opens this; Escape goes back."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="why.back"),
        Binding("w", "focus_whatif", "What-if", id="why.whatif"),
    ]

    def __init__(
        self,
        decided: GateDecided,
        before: SessionState,
        domain: Domain | None,
        policy: str | None,
        unavailable: str = "",
    ) -> None:
        super().__init__()
        self.decided = decided
        self.before = before
        self.domain = domain
        self.policy = policy
        self.unavailable = unavailable
        self.targets = editable_targets(decided, before)
        self.outcome: GateDecision | None = None
        self._offered: tuple[str, Any] | None = None  # the value put in the box, as shown and as recorded

    def compose(self) -> ComposeResult:
        d = self.decided.decision
        kind = row_class(d)
        yield Static(self._title(), id="why-title", classes=f"-{kind}")
        with VerticalScroll(id="why-body"):
            yield Static(self._summary(d), id="why-summary", classes=f"-{kind}")
            for p in sorted(d.predicates, key=lambda p: (p.passed, p.needs_a_read())):
                fail = "-needs-read" if p.needs_a_read() else f"-{p.verdict_on_fail.value.lower()}"
                yield Static(describe_predicate(p, self.policy), classes="predicate " + ("-pass" if p.passed else f"-fail {fail}"))
            if not self.policy:
                yield Static(Text(shown("policy text unavailable: " + (self.unavailable or "no domain loaded"))), classes="dim")
        with Vertical(id="whatif-panel"):
            with Horizontal(id="whatif"):
                options = [(shown(f"arg {k}" if t == "argument" else k, markup=True), i) for i, (t, k, _) in enumerate(self.targets)]
                yield Select(options, prompt="what-if: change…", id="whatif-target", allow_blank=True)
                yield Input(placeholder="new value (JSON or text), Enter to re-run the gate", id="whatif-value")
            with VerticalScroll(id="whatif-scroll"):
                yield Static(self._whatif_intro(), id="whatif-result")
        yield Footer()

    # ------------------------------------------------------------------ text
    def _title(self) -> Text:
        d = self.decided.decision
        who = WHO.get(d.call.requestor, d.call.requestor)
        kind = f" {category_label(d)} ·" if d.verdict.value != "ALLOW" else ""
        return Text.assemble((f" {d.verdict.value} ", "bold reverse"), shown(f"{kind} step {self.decided.seq} · {who} · {d.call.signature()}"))

    def _summary(self, d: GateDecision) -> Text:
        text = Text.assemble(("call ", "bold"), shown(d.call.name))
        for k, v in d.call.arguments.items():
            text.append(shown(f"\n{INDENT}{k} = {in_full(v, INDENT * 2)}"))
        text.append_text(Text.assemble("\n", ("verdict ", "bold"), shown(f"{verdict_label(d)}: {d.reason}")))
        if d.hint:
            text.append_text(Text.assemble("\n", ("hint ", "bold"), shown(d.hint)))
        for s in d.suggested_calls:
            text.append(shown(f"\n{INDENT}suggested read: {s.signature()}"))
        return text

    def _whatif_intro(self) -> Text:
        if self.domain is None:
            return Text(shown(f"what-if needs the domain's predicates: {self.unavailable or 'no domain loaded'}."), style="dim")
        return Text("Pick an argument or a ledger value to change, edit it, press Enter: the gate runs again on the state at this step.", style="dim")

    # ------------------------------------------------------------------ what-if
    def action_focus_whatif(self) -> None:
        self.query_one("#whatif-target", Select).focus()

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.value is Select.BLANK or not isinstance(event.value, int):
            return
        _, _, value = self.targets[event.value]
        box = self.query_one("#whatif-value", Input)
        box.value = shown(value if isinstance(value, str) else compact(value))
        self._offered = (box.value, value)
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        choice = self.query_one("#whatif-target", Select).value
        if not isinstance(choice, int):
            self.notify("Pick what to change first (the list left of the value).", severity="warning")
            return
        value: Any
        if self._offered is not None and event.value == self._offered[0]:
            value = self._offered[1]  # left as offered: the recorded value, control characters and all
        else:
            try:
                value = json.loads(event.value)
            except ValueError:
                value = event.value
        target, key, _ = self.targets[choice]
        self.run_what_if(Edit(target, key, value))  # type: ignore[arg-type]

    def run_what_if(self, edit: Edit) -> GateDecision | None:
        """Re-run the gate with `edit`; shows and returns the new decision."""
        result = self.query_one("#whatif-result", Static)
        if self.domain is None:
            self.notify(shown(self._whatif_intro().plain, markup=True), severity="warning")
            return None
        outcome = what_if(self.decided, self.before, self.domain, edit)
        self.outcome = outcome
        result.update(describe_outcome(self.decided.decision, outcome, edit))
        self.query_one("#whatif-scroll", VerticalScroll).scroll_home(animate=False)
        result.remove_class("-allow", "-revise", "-block", "-needs-read")
        result.add_class(f"-{row_class(outcome)}")
        return outcome
