"""Why: one gate decision explained from its recorded evidence, plus a what-if to change the verdict.

Everything above the what-if panel comes from the decision as recorded (nothing re-runs). The
what-if rebuilds the state the gate saw with the fold, applies one edit (an argument or a ledger
value) and asks the domain's predicates again, showing the new verdict next to the old one.

The answer comes first: the verdict, its reason and the checks that decided it. Then the failed
checks with their policy clauses, the passed ones a line each, and the evidence grouped by path:
each record once, with the checks that read it and the fields each used (recorded by the gate as
the check ran), those fields in bold and whole, the rest on one line. A stop says whether it is a
violation or only needs a read, and a stated fact shows the customer's words and the step of
their message. In replay, Enter on a record goes to the step it was read at. The wording is
`ledger_tui.explain`'s, as in `ledger-tui why`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Input, Select, Static

from ledger_tui.engine.events import (
    EvidenceRead,
    GateDecided,
    GateDecision,
    PredicateResult,
)
from ledger_tui.engine.store.fold import SessionState
from ledger_tui.engine.outside import shown
from ledger_tui.engine.policy_text import clause_text
from ledger_tui.engine.store.serialize import compact
from ledger_tui.explain import category_label, check_label, stated_where, verdict_label
from ledger_tui.ui.screens.help import HelpScreen, screen_keys
from ledger_tui.ui.whatif import Edit, editable_targets, what_if
from ledger_tui.ui.widgets.gate_log import row_class
from ledger_tui.ui.widgets.tool_call_item import WHO

if TYPE_CHECKING:  # (a replay loads its domain when first needed)
    from ledger_tui.engine.domain import Domain


INDENT = "\u00a0\u00a0"  # non-breaking, so wrapping keeps the indentation
PROMPT = "what-if: change…"
HELP_NOTE = "Esc goes back. The what-if panel only asks the gate again: nothing is executed."
SIGNATURE_IN_TITLE = 60  # a call signature up to this long is read whole in the title


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


def _reads_of(p: PredicateResult) -> str:
    """What a check read, by name only (the values are in the evidence below, once each)."""
    parts = []
    for r in p.reads:
        if r.origin == "context":
            parts.append(r.path)
        elif r.fields and isinstance(r.value, dict):
            parts.append(f"{r.path} ({', '.join(r.fields)})")
        else:
            parts.append(r.path + ("" if r.present else " (not in the ledger)"))
    return ", ".join(dict.fromkeys(parts))


def describe_predicate(p: PredicateResult, policy: str | None, decision: GateDecision | None = None) -> Text:
    """One failed check: its verdict, its reason and hint (unless the summary above already says
    them), what it read by name (each record is shown once, under Evidence) and its policy clause."""
    text = Text.assemble((f"[{check_label(p, ' → ')}] ", "bold"), (shown(p.name), "bold"), shown(f" · clause {p.clause}"))
    if not p.passed and p.reason and (decision is None or p.reason != decision.reason):
        text.append(shown(f"\n{INDENT}reason: {p.reason}"))
    if not p.passed and p.hint and (decision is None or p.hint != decision.hint):
        text.append(shown(f"\n{INDENT}hint: {p.hint}"))
    if p.passed or p.error:  # a failed check's reads are the Evidence below, each with who read it
        read = _reads_of(p)
        if read:
            text.append(shown(f"\n{INDENT}read: {read}"), style="dim")
    clause = policy_clause(policy, p.clause) if not p.passed else ""
    if clause:
        text.append(shown(f"\n{INDENT}policy: {clause}"), style="italic")
    return text


def describe_passed(passed: list[PredicateResult]) -> Text:
    text = Text()
    for i, p in enumerate(passed):
        text.append("\n" if i else "")
        text.append(shown(f"[pass] {p.name}"), style="bold")
        read = _reads_of(p)
        text.append(shown(f" · clause {p.clause}" + (f" · read: {read}" if read else "")))
    return text


@dataclass
class Evidence:
    """One ledger path as every check of the decision read it: the value once, who read it and
    which fields each used."""

    read: EvidenceRead
    checks: dict[str, list[str]] = field(default_factory=dict)  # check name -> fields it used

    @property
    def used(self) -> list[str]:
        return list(dict.fromkeys(f for fields in self.checks.values() for f in fields))


def gather(d: GateDecision) -> tuple[list[Evidence], list[EvidenceRead]]:
    """The decision's evidence by path (the deciding checks' reads first) and its context facts."""
    order = sorted(d.predicates, key=lambda p: (p.passed, p.needs_a_read()))
    by_path: dict[str, Evidence] = {}
    context: dict[str, EvidenceRead] = {}
    for p in order:
        for r in p.reads:
            if r.origin == "context":
                context.setdefault(r.path, r)
                continue
            ev = by_path.setdefault(r.path, Evidence(r))
            fields = ev.checks.setdefault(p.name, [])
            fields += [f for f in r.fields or () if f not in fields]
    return list(by_path.values()), list(context.values())


def describe_evidence(ev: Evidence, can_jump: bool) -> Text:
    """A record once: where it came from and the checks that read it (with the fields they used);
    then the used fields in bold and whole, and the others on one line, cut."""
    r = ev.read
    value = r.value
    head = Text(shown(r.path), style="bold")
    if r.stale:
        head.append(" STALE", style="bold")
    if not r.present:
        head.append(shown(" · not in the ledger"), style="italic")
    elif not isinstance(value, dict):
        head.append(shown(f" = {short(value, 120)}"), style="bold")
    if r.present and r.origin == "stated":
        head.append(shown(f" · {stated_where(r)}"), style="dim")
    elif r.present:
        where = f" · read at step {r.source_seq}" if r.source_seq is not None else " · read"
        if r.source_call:
            where += f" by {r.source_call}"
        head.append(shown(where), style="dim")
        if can_jump and r.source_seq is not None:
            head.append("  (Enter: go to that step)", style="dim italic")
    checks = ", ".join(f"{name} ({', '.join(fields)})" if fields else name for name, fields in ev.checks.items())
    head.append(shown(f"\n{INDENT}read by {checks}"), style="dim")
    if not r.present or not isinstance(value, dict):
        return head
    used = ev.used
    for name in used:
        head.append(shown(f"\n{INDENT}{name}: "), style="bold")
        head.append(shown(in_full(value[name], INDENT * 2, inline=120) if name in value else "(not in the record)"), style="bold")
    others = [f"{k}={short(v, 40)}" for k, v in value.items() if k not in used]
    if others:
        head.append(shown(f"\n{INDENT}{'other fields: ' if used else ''}{' · '.join(others)}"), style="dim")
    return head


def describe_context(facts: list[EvidenceRead]) -> Text:
    text = Text("session context ", style="bold")
    text.append(shown(" · ".join(f"{r.path.removeprefix('context.')}={short(r.value, 100)}" for r in facts)), style="dim")
    return text


class EvidenceBlock(Static, can_focus=True):
    """One record of the evidence; Enter goes to the step it was read at (replay)."""

    BINDINGS = [Binding("enter", "go", "Go to step", id="why.go_to_step")]

    def __init__(self, evidence: Evidence, jump: Callable[[int], None] | None, **kwargs: Any) -> None:
        super().__init__(describe_evidence(evidence, jump is not None), **kwargs)
        self.evidence = evidence
        self.jump = jump

    def action_go(self) -> None:
        seq = self.evidence.read.source_seq
        if self.jump is None or seq is None:
            self.notify("This value has no step to go to (a customer statement in play, or not in the ledger).")
            return
        self.app.pop_screen()
        self.jump(seq)


def describe_outcome(before: GateDecision, outcome: GateDecision, edits: list[Edit]) -> Text:
    """The what-if answer, most important first: the new verdict, the checks that flipped, the
    new reason, and last the edits tried so far (Ctrl+R resets them)."""
    kind = f" {category_label(outcome)}" if outcome.verdict.value != "ALLOW" else ""
    text = Text.assemble(("→ ", "bold"), (f" {outcome.shown_verdict()} ", "bold reverse"), f"{kind} (was {verdict_label(before)})")
    was = {p.name: p.passed for p in before.predicates}
    for p in outcome.predicates:
        if p.name in was and was[p.name] != p.passed:
            text.append(shown(f"\n{INDENT}{p.name}: "))
            text.append("FAIL→pass" if p.passed else "pass→FAIL", style="bold")
        elif p.name not in was:
            text.append(shown(f"\n{INDENT}{p.name}: "))
            text.append("now checked, " + ("pass" if p.passed else "FAIL"), style="bold")
    text.append(shown(f"\n{outcome.reason}"))
    changes = " · ".join(f"{e.label()} = {short(e.value, 60)}" for e in edits)
    text.append(shown(f"\nwhat-if ({len(edits)} {'change' if len(edits) == 1 else 'changes'}, Ctrl+R resets): {changes}"), style="dim")
    return text


class WhyScreen(Screen[None]):
    """Enter on a gate log row opens this; Escape goes back."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="why.back"),
        Binding("f1", "help", "Help", id="why.help"),
        Binding("w", "focus_whatif", "What-if", id="why.whatif", tooltip="type to filter the fields, pick one, edit its value"),
        Binding("ctrl+r", "reset_whatif", "Reset what-if", id="why.whatif_reset"),
    ]

    def __init__(
        self,
        decided: GateDecided,
        before: SessionState,
        domain: Domain | None,
        policy: str | None,
        unavailable: str = "",
        jump: Callable[[int], None] | None = None,
        waits: list[str] | None = None,
    ) -> None:
        super().__init__()
        # what the call waited on, as `why` prints it: the question it was held for, the card it
        # is on or ran from, and the customer's answers (explain.waits_lines)
        self.waits = waits or []
        self.jump = jump  # go to a step of the replay (None in play)
        self.decided = decided
        self.before = before
        self.domain = domain
        self.policy = policy
        self.unavailable = unavailable
        self.targets = editable_targets(decided, before)
        self.edits: dict[tuple[str, str, str | None], Edit] = {}  # what-if changes so far, by slot
        self.outcome: GateDecision | None = None
        self._offered: tuple[str, Any] | None = None  # the value put in the box, as shown and as recorded
        self.drafts: dict[int, str] = {}  # typed in the box and not yet run, by target: kept while picking others
        self._filter = ""  # what the picker's list is filtered by
        self._quiet: list[Any] = []  # picker values set by the screen, not chosen: the focus stays where it is

    def compose(self) -> ComposeResult:
        d = self.decided.decision
        kind = row_class(d)
        yield Static(self._title(), id="why-title", classes=f"-{kind}")
        with VerticalScroll(id="why-body"):
            yield Static(self._summary(d), id="why-summary", classes=f"-{kind}")
            if self.waits:
                yield Static(Text("Asked of the customer", style="bold"), classes="why-heading")
                yield Static(Text(shown("\n".join(self.waits))), classes="evidence -card", id="why-card")
            yield Static(Text("Checks", style="bold"), classes="why-heading")
            for p in sorted((p for p in d.predicates if not p.passed), key=lambda p: p.needs_a_read()):
                fail = "-needs-read" if p.needs_a_read() else f"-{p.verdict_on_fail.value.lower()}"
                yield Static(describe_predicate(p, self.policy, d), classes=f"predicate -fail {fail}")
            passed = [p for p in d.predicates if p.passed]
            if passed:  # one line each: what passed is context, not the answer
                yield Static(describe_passed(passed), classes="predicate -pass")
            evidence, context = gather(d)
            if evidence or context:
                yield Static(Text("Evidence (each record once; the fields a check used in bold)", style="bold"), classes="why-heading")
            for ev in evidence:
                yield EvidenceBlock(ev, self.jump, classes="evidence" + (" -stated" if ev.read.origin == "stated" else ""))
            if context:
                yield Static(describe_context(context), classes="evidence -context")
            if not self.policy:
                yield Static(Text(shown("policy text unavailable: " + (self.unavailable or "no domain loaded"))), classes="dim")
        with Vertical(id="whatif-panel"):
            # shown by `w` (and while it holds text): the screen keeps its lines until it is wanted
            yield Input(placeholder="type to filter the fields", id="whatif-filter")
            with Horizontal(id="whatif"):
                yield Select(self._options(), prompt=PROMPT, id="whatif-target", allow_blank=True)
                # not selected on focus: coming back to the box (Tab, a click) keeps what was typed
                yield Input(placeholder="new value (JSON or text), Enter to re-run the gate", id="whatif-value", select_on_focus=False)
            with VerticalScroll(id="whatif-scroll"):
                yield Static(self._whatif_intro(), id="whatif-result")
        yield Footer(compact=True)

    # ------------------------------------------------------------------ text
    def _title(self) -> Text:
        d = self.decided.decision
        who = WHO.get(d.call.requestor, d.call.requestor)
        kind = f" {category_label(d)} ·" if d.verdict.value != "ALLOW" else ""
        return Text.assemble((f" {d.shown_verdict()} ", "bold reverse"), shown(f"{kind} step {self.decided.seq} · {who} · {d.call.signature()}"))

    def _summary(self, d: GateDecision) -> Text:
        """The answer first: the verdict and its reason, the checks that decided it, the hint; then
        the call."""
        text = Text.assemble(("verdict ", "bold"), shown(f"{verdict_label(d)}: {d.reason}"))
        deciding = [p for p in d.predicates if not p.passed and p.verdict_on_fail == d.verdict]
        deciding.sort(key=lambda p: (bool(p.consent), bool(p.question), p.needs_a_read()))  # as the reason orders them
        if deciding:
            names = ", ".join(f"{p.name}{' (needs a read)' if p.needs_a_read() else ''}" for p in deciding)
            text.append_text(Text.assemble("\n", ("decided by ", "bold"), shown(names)))
        reads = [p.name for p in d.failed() if p.needs_a_read() and p not in deciding]
        if reads:  # a broken rule decides; the reads it also lacks are listed, not hidden
            text.append_text(Text.assemble("\n", ("also needs a read ", "bold"), shown(", ".join(reads))))
        if d.hint:
            text.append_text(Text.assemble("\n", ("hint ", "bold"), shown(d.hint)))
        for s in d.suggested_calls:
            text.append(shown(f"\n{INDENT}suggested read: {s.signature()}"))
        if len(d.call.signature()) > SIGNATURE_IN_TITLE:  # the title shows a short call whole
            text.append_text(Text.assemble("\n", ("call ", "bold"), shown(d.call.name)))
            for k, v in d.call.arguments.items():
                text.append(shown(f"\n{INDENT}{k} = {in_full(v, INDENT * 2)}"))
        return text

    def _whatif_intro(self) -> Text:
        if self.domain is None:
            return Text(shown(f"what-if needs the domain's predicates: {self.unavailable or 'no domain loaded'}."), style="dim")
        return Text("Pick an argument or a record's field (w: type to filter them), edit it, Enter: the gate runs again. Changes add up; Ctrl+R resets.", style="dim")

    # ------------------------------------------------------------------ layout
    def on_mount(self) -> None:
        self.call_after_refresh(self._place_toasts)

    def on_resize(self) -> None:
        self.call_after_refresh(self._place_toasts)

    def _place_toasts(self) -> None:
        """Notifications go on the right just under the answer (title and summary), never over the
        verdict; when the answer is too tall for that, above the what-if panel, still under the
        verdict's line."""
        try:
            summary = self.query_one("#why-summary")
            panel = self.query_one("#whatif-panel")
            rack = self.query_one("#textual-toastrack")
        except Exception:  # not laid out yet, or gone
            return
        scrolled = int(self.query_one("#why-body", VerticalScroll).scroll_y)
        first_line = summary.region.y + scrolled
        top = max(first_line + 1, min(summary.region.bottom + scrolled, panel.region.y - 4))
        rack.styles.margin = (top, 0, 0, 0)

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(screen_keys(self), console=False, note=HELP_NOTE))

    # ------------------------------------------------------------------ what-if
    def _options(self, words: str = "") -> list[tuple[str, int]]:
        """The picker's choices: every target whose label holds `words` (any case)."""
        words = words.strip().lower()
        return [(shown(t.label(), markup=True), i) for i, t in enumerate(self.targets) if words in t.label().lower()]

    def _pick(self, index: Any) -> None:
        """Set the picker without taking the focus to the value box (the screen's own change)."""
        select = self.query_one("#whatif-target", Select)
        if select.value == index:
            return
        self._quiet.append(index)
        if index is Select.BLANK:
            select.clear()
        else:
            select.value = index

    def filter_targets(self, words: str) -> None:
        """Show only the fields whose name holds `words`; the one picked stays picked if it matches."""
        if words == self._filter:
            return
        self._filter = words
        select = self.query_one("#whatif-target", Select)
        current = select.value
        options = self._options(words)
        if current is not Select.BLANK:
            self._quiet.append(Select.BLANK)  # set_options clears the pick
        select.set_options(options)
        if not words.strip():
            select.prompt = PROMPT
        elif options:
            select.prompt = f"{len(options)} of {len(self.targets)} match"
        else:
            select.prompt = shown(f"no field holds {words.strip()!r}", markup=True)
        if any(i == current for _, i in options):
            self._pick(current)

    def action_focus_whatif(self) -> None:
        self.query_one("#whatif-panel").add_class("-filtering")
        self.query_one("#whatif-filter", Input).focus()

    def on_input_blurred(self, event: Input.Blurred) -> None:
        if event.input.id == "whatif-filter" and not event.value:
            self.query_one("#whatif-panel").remove_class("-filtering")

    def on_select_changed(self, event: Select.Changed) -> None:
        quiet = event.value in self._quiet
        if quiet:
            self._quiet.remove(event.value)
        if event.value is Select.BLANK or not isinstance(event.value, int):
            return
        target = self.targets[event.value]
        value = self.edits[target.slot].value if target.slot in self.edits else target.value
        box = self.query_one("#whatif-value", Input)
        offered = shown(value if isinstance(value, str) else compact(value))
        self._offered = (offered, value)
        box.value = self.drafts.get(event.value, offered)
        if not quiet:  # picked by the operator: on to the value, ready to be replaced
            box.focus()
            box.select_all()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "whatif-filter":
            self.filter_targets(event.value)
            return
        choice = self.query_one("#whatif-target", Select).value
        if event.input.id != "whatif-value" or not isinstance(choice, int):
            return
        if self._offered is not None and event.value == self._offered[0]:
            self.drafts.pop(choice, None)
        else:
            self.drafts[choice] = event.value

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        select = self.query_one("#whatif-target", Select)
        if event.input.id == "whatif-filter":  # Enter: the first field that matches
            options = self._options(event.value)
            if not options:
                self.notify(shown(f"No field holds {event.value.strip()!r}; Ctrl+R clears the filter.", markup=True), severity="warning")
                return
            if select.value == options[0][1]:
                self.query_one("#whatif-value", Input).focus()
            else:
                select.value = options[0][1]
            return
        choice = select.value
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
        target = self.targets[choice]
        self.drafts.pop(choice, None)
        self.run_what_if(Edit(target.target, target.key, value, target.field))

    def run_what_if(self, edit: Edit) -> GateDecision | None:
        """Add `edit` to the changes so far (replacing an earlier one of the same slot) and re-run
        the gate with all of them; shows and returns the new decision."""
        result = self.query_one("#whatif-result", Static)
        if self.domain is None:
            self.notify(shown(self._whatif_intro().plain, markup=True), severity="warning")
            return None
        self.edits[edit.slot] = edit
        edits = list(self.edits.values())
        outcome = what_if(self.decided, self.before, self.domain, edits)
        self.outcome = outcome
        result.update(describe_outcome(self.decided.decision, outcome, edits))
        self.query_one("#whatif-scroll", VerticalScroll).scroll_home(animate=False)
        result.remove_class("-allow", "-revise", "-block", "-needs-read", "-consent", "-withheld")
        result.add_class(f"-{row_class(outcome)}")
        return outcome

    def action_reset_whatif(self) -> None:
        """Forget every what-if change: the recorded decision again, the picker's whole list with
        its first field picked (its recorded value in the box) and no filter."""
        self.edits.clear()
        self.drafts.clear()
        self.outcome = None
        result = self.query_one("#whatif-result", Static)
        result.update(self._whatif_intro())
        result.remove_class("-allow", "-revise", "-block", "-needs-read", "-consent", "-withheld")
        whatif_filter = self.query_one("#whatif-filter", Input)
        whatif_filter.value = ""
        self.filter_targets("")
        if not whatif_filter.has_focus:
            self.query_one("#whatif-panel").remove_class("-filtering")
        select = self.query_one("#whatif-target", Select)
        first = 0 if self.targets else Select.BLANK
        box = self.query_one("#whatif-value", Input)
        if select.value == first and isinstance(first, int):  # no change message comes: the box by hand
            target = self.targets[first]
            box.value = shown(target.value if isinstance(target.value, str) else compact(target.value))
            self._offered = (box.value, target.value)
        elif first is Select.BLANK:
            box.value = ""
        self._pick(first)
        self.notify("What-if reset: the decision as recorded.")
