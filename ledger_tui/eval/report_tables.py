"""The report as text: the failure classes per domain and mode, one bar per primary class, and
the passes per task and mode, fitting 80 columns unless --wide."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ledger_tui.eval.comparison import ModeCounts, TaskComparison
from ledger_tui.eval.ordering import mode_key
from ledger_tui.eval.tables import WIDTH, Column, cell, new_table, number
from ledger_tui.eval.tables import lines as rendered
from ledger_tui.eval.taxonomy import PRECEDENCE

if TYPE_CHECKING:
    from ledger_tui.eval.report import Report


def _cell(primary: int, any_: int) -> str:
    if not any_:
        return "-"
    return str(primary) if primary == any_ else f"{primary} ({any_})"


def class_table(counts: list[ModeCounts], wide: bool = False) -> list[str]:
    """Classes down, domain/mode across: primary count, with runs showing the class at all in brackets.

    Unless `wide`, a table that would pass 80 columns is split into one table per domain."""
    if not counts:
        return []
    domains = list(dict.fromkeys(c.label.split("/")[0] for c in counts))
    classes = [cls for cls in PRECEDENCE if any(c.any[cls] for c in counts)]
    first = max(len("failed"), *(len(cls) for cls in classes)) + 2 if classes else 8
    if not wide and len(domains) == 1:
        labels = [c.label.split("/", 1)[-1] for c in counts]
    else:
        labels = [c.label for c in counts]
    width = max(8, *(len(label) + 2 for label in labels))
    if not wide and first + width * len(counts) > WIDTH and len(domains) > 1:
        lines: list[str] = []
        for d in domains:
            lines += ([""] if lines else []) + class_table([c for c in counts if c.label.split("/")[0] == d])
        return lines
    title = f"{domains[0]}: " if len(domains) == 1 and labels[0] != counts[0].label else ""
    table = new_table(Column(title + "class", no_wrap=True), *(number(label, 6) for label in labels))
    table.add_row(*map(cell, ["runs", *(str(c.runs) for c in counts)]))
    table.add_row(*map(cell, ["failed", *(str(c.failed) for c in counts)]))
    for cls in classes:
        table.add_row(*map(cell, [cls, *(_cell(c.primary[cls], c.any[cls]) for c in counts)]))
    return rendered(table, wide)


def class_bars(counts: list[ModeCounts], width: int = 30) -> list[str]:
    """One bar per primary class per domain/mode, on one scale so modes compare by eye."""
    top = max((n for c in counts for n in c.primary.values()), default=0)
    if not top:
        return ["no failed runs"]
    lines = []
    for c in counts:
        lines.append(f"{c.label}  ({c.failed} failed of {c.runs})")
        for cls in PRECEDENCE:
            n = c.primary[cls]
            if n:
                bar = "#" * max(1, round(n / top * width))
                lines.append(f"  {cls:<28} {bar:<{width}} {n}")
    return lines


def task_lines(comparisons: list[TaskComparison], wide: bool = False) -> list[str]:
    """Passes per task and mode, with the change against baseline; then, task by task, each failed
    mode's classes. Unless `wide`, the table fits 80 columns: a long task name ends in "…", and the
    change goes under the task's name below when the table has no room for it."""
    if not comparisons:
        return []
    modes = sorted({m for t in comparisons for m in t.modes}, key=mode_key)
    several = len({t.domain for t in comparisons}) > 1
    names = [f"{t.domain}/{t.task_id}" if several else t.task_id for t in comparisons]
    column = max(9, *(len(m) + 2 for m in modes))
    width = max(6, *(len(n) for n in names)) + 2
    width = width if wide else max(12, min(width, 42, WIDTH - column * len(modes)))
    compare = "baseline" in modes and len(modes) > 1
    inline = compare and (wide or width + column * len(modes) + 3 + len("change against baseline") <= WIDTH)
    task = Column("task", no_wrap=True, overflow="ellipsis", max_width=None if wide else width - 2)
    passes = new_table(task, *(number(m, 7) for m in modes), *([Column("change against baseline")] if inline else []))
    why: list[str] = []
    for name, t in zip(names, comparisons):
        change = ", ".join(t.changes) or "same"
        passes.add_row(*map(cell, [name, *(t.modes[m].cell() if m in t.modes else "-" for m in modes), *([change] if inline else [])]))
        said = [f"    against baseline: {change}"] if compare and not inline and t.changes else []
        said += [f"    {m}: {', '.join(o.primaries)}" for m, o in t.modes.items() if o.primaries]
        if said:
            why += [f"{name}:", *said]
    if not why:
        return rendered(passes, wide)
    below = "failed modes' classes" + ("" if inline or not compare else ", and what changed against baseline")
    return [*rendered(passes, wide), "", below, *why]


def report_lines(report: Report, wide: bool = False) -> list[str]:
    kind = "eval output" if report.source == "eval" else "trajectories"
    from ledger_tui.explain import plural

    lines = [f"report    {report.folder}  ({kind}: {len(report.runs)} runs, {len(report.failed)} failed)"]
    disclosing = [r for r in report.runs if r.disclosures]
    if disclosing:
        imported = all(r.mode == "imported" for r in disclosing)
        lines.append(
            f"disclosure  {plural(sum(r.disclosures for r in disclosing), 'read')} of a record not the identified customer's, "
            f"in {plural(len(disclosing), 'run')}"
        )
        lines.append(
            f"            ({'seen by the recorded agent, withheld in gated modes' if imported else 'withheld from the model'}: "
            "`why FILE`)"
        )
    lines.append("")
    counts = report.counts()
    lines.append("failed runs by primary class (in brackets: runs showing the class at all)")
    lines += class_table(counts, wide)
    lines += ["", "primary class of failed runs"]
    lines += class_bars(counts)
    tasks = report.tasks()
    modes = {m for t in tasks for m in t.modes}
    against = ", what changed against baseline" if "baseline" in modes and len(modes) > 1 else ""
    lines += ["", f"per task: passes by mode{against}"]
    lines += task_lines(tasks, wide)
    from ledger_tui.eval import paper

    table = paper.table(report.paper, report.costs)
    if table:
        lines += ["", *table]
    return lines
