"""The trajectory format for other tools: its JSON Schema (`schema`) and trajectories as
OpenTelemetry traces (`export`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from ledger_tui.commands.shared import say
from ledger_tui.engine.errors import LedgerTuiError
from ledger_tui.examples import resolve_session
from ledger_tui.explain import plural


def schema(
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Write it to this file instead of printing it."),
) -> None:
    """Print the trajectory format as a JSON Schema (one line of a .jsonl file: one event)."""
    from ledger_tui.engine.store.schema import schema_text

    text = schema_text()
    if out is None:
        sys.stdout.write(text)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise LedgerTuiError(f"Cannot write {out} ({exc.strerror or exc}); pass --out a file you can write.") from None
    say(f"schema    {out}")


def export(
    trajectories: list[Path] = typer.Argument(..., help="Trajectory files (.jsonl), shipped sessions' names, or folders of them (an eval's output)."),
    otel: Path = typer.Option(..., "--otel", help="Write OpenTelemetry GenAI spans here, as OTLP JSON (one trace per trajectory)."),
    force: bool = typer.Option(False, "--force", help="Replace the --otel file if it exists.", metavar=""),
) -> None:
    """Export trajectories as OpenTelemetry traces: a span per model call and per tool call, the
    gate's decisions as span events with their evidence."""
    from ledger_tui.engine.store.trajectories import read_trajectory
    from ledger_tui.eval.otel import export_request
    from ledger_tui.eval.results import trajectory_files

    if otel.exists() and not force:
        raise LedgerTuiError(f"{otel} exists; pass --force to replace it, or another --otel file.")
    read: list[tuple[Path, list]] = []
    for given in trajectories:
        if given.is_dir():
            found = trajectory_files(given)
            if not found:
                raise LedgerTuiError(f"{given} holds no trajectory (.jsonl); pass trajectory files or an eval's output folder.")
            for path in found:
                try:
                    read.append((path, read_trajectory(path).events))
                except LedgerTuiError as exc:
                    say(f"skipped   {exc}", err=True)
        else:
            path = resolve_session(given)
            read.append((path, read_trajectory(path).events))
    request = export_request(read)
    spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"]
    try:
        otel.write_text(json.dumps(request, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as exc:
        raise LedgerTuiError(f"Cannot write {otel} ({exc.strerror or exc}); pass --otel a file you can write.") from None
    decisions = sum(len(s.get("events", ())) for s in spans)
    say(f"otel      {otel}: {plural(len(read), 'trace')}, {plural(len(spans), 'span')}, {plural(decisions, 'gate decision')}")
