"""The domains: list them (`domains`), scaffold a new one (`new-domain`), check one's parts agree
(`check-domain`), and list the sessions and scripts shipped with them (`examples`)."""

from __future__ import annotations

from pathlib import Path

import typer

from ledger_tui.commands.shared import say
from ledger_tui.engine.errors import LedgerTuiError
from ledger_tui.examples import runs_home
from ledger_tui.explain import plural


def domains() -> None:
    """List the domains: what each holds, its tools by kind and its policy predicates."""
    import textwrap

    from ledger_tui.domains import available, load_domain, origin, shadowed

    def wrapped(label: str, names: list[str]) -> None:
        head = f"{label}: "
        for line in textwrap.wrap(", ".join(names), width=80 - 12 - len(head), break_on_hyphens=False) or ["none"]:
            say(f"{'':<12}{head}{line}")
            head = " " * len(head)

    broken = 0
    for name in available():
        try:
            d = load_domain(name)
        except LedgerTuiError as exc:  # a plugin that does not load: said, and the others listed
            broken += 1
            say(f"{name:<11} (does not load)")
            for line in textwrap.wrap(str(exc), width=80 - 12):
                say(f"{'':<12}{line}")
            continue
        reads = sum(1 for t in d.tools if t.kind == "read")
        writes = sum(1 for t in d.tools if t.kind == "write")
        other = len(d.tools) - reads - writes
        extra = f", {len(d.user_tools)} customer-side" if d.user_tools else ""
        from ledger_tui.engine.agents.tasks import load_tasks

        tasks = load_tasks(d.tasks_path) if d.tasks_path.exists() else []
        refusals = sum(t.is_refusal for t in tasks)
        say(f"{name:<11} {d.title}")
        say(f"{'':<12}{plural(reads, 'read')}, {plural(writes, 'write')}, {other} generic{extra}; {plural(len(d.predicates), 'predicate')}")
        say(f"{'':<12}{plural(len(tasks), 'task')} ({refusals} refusals); clock {d.clock}")
        wrapped("from", [origin(name)])
        wrapped("reads", [t.name for t in d.tools if t.kind == "read"])
        wrapped("writes", [t.name for t in d.tools if t.kind == "write"])
        wrapped("generic", [t.name for t in d.tools if t.kind not in ("read", "write")])
        if d.user_tools:
            wrapped("customer", [t.name for t in d.user_tools])
        wrapped("predicates", sorted({p.name for p in d.predicates}))
    for name, ep in shadowed().items():
        who = ep.dist.name if ep.dist is not None else ep.value
        say(f"note: {who} also registers a domain {name!r}; the shipped one is used (rename the plugin's entry point).")
    if broken:
        raise typer.Exit(1)


def new_domain(
    name: str = typer.Argument(..., help="The domain's name (lowercase letters, digits, _): what --domain takes."),
    dir_: Path = typer.Option(Path("."), "--dir", help="Where to write the package folder ledger-tui-NAME."),
) -> None:
    """Write a working minimal domain package (one read, one write, one predicate, one task, a
    test) that installs with `pip install -e` and registers itself with ledger-tui."""
    from ledger_tui.scaffold import new_domain as scaffold

    root = scaffold(name, dir_)
    say(f"wrote     {root}")
    say(f"next:     pip install -e {root}   then   ledger-tui domains   |   ledger-tui eval --domain {name} --agent gold")


def check_domain(
    names: list[str] = typer.Argument(..., help="The domains to check (see `ledger-tui domains`).", metavar="NAME..."),
) -> None:
    """Check that a domain's parts agree and its cases.json gets the gate's verdicts; exit 1 on findings.

    Policy clauses and predicates, path map, touched paths and Terms, tool and database schemas."""
    from ledger_tui.domains import load_domain
    from ledger_tui.eval.check_domain import check_domain as lint
    from ledger_tui.eval.check_domain import summary

    found = 0
    for d in [load_domain(name) for name in names]:
        findings = lint(d)
        for f in findings:
            say(f.line())
        say(summary(d, findings))
        found += len(findings)
    if found:
        raise typer.Exit(1)


def examples() -> None:
    """List the shipped sessions (for replay, why, regress) and scripts (for run --script), by name."""
    from ledger_tui import examples as shipped

    import textwrap

    def listed(head: str, found: list) -> None:
        say(head)
        for e in found:  # a name, then its title under it: both fit 80 columns
            say(f"  {e.name}")
            for line in textwrap.wrap(e.title, width=80, initial_indent=" " * 6, subsequent_indent=" " * 6):
                say(line)

    listed("sessions   ledger-tui replay NAME  (why, regress)", shipped.sessions())
    say("")
    listed("scripts    ledger-tui run --script NAME", shipped.scripts())
    say("")
    say(f"installed in {shipped.sessions_folder()} and {shipped.domains_folder()}/*/scripts")
    say(f"new runs go to {runs_home()}")
