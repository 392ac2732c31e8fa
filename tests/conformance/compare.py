"""Run a case on both sides and say how they differ (success or error, text, digests)."""

from __future__ import annotations

from dataclasses import dataclass

from tests.conformance.calls import Case
from tests.conformance.reference import Observation, run_project, run_reference


@dataclass(frozen=True)
class Mismatch:
    case: Case
    ours: Observation
    theirs: Observation

    def aspects(self) -> list[str]:
        out = []
        if self.ours.error != self.theirs.error:
            out.append("outcome")
        if self.ours.content != self.theirs.content:
            out.append("text")
        if self.ours.agent_digest != self.theirs.agent_digest:
            out.append("db")
        if self.ours.user_digest != self.theirs.user_digest:
            out.append("phone db")
        return out

    def describe(self) -> str:
        return (
            f"{self.case.label()}\n  differs in: {', '.join(self.aspects())}\n"
            f"  τ²-bench ({'error' if self.theirs.error else 'ok'}): {self.theirs.content[:400]}\n"
            f"  ours     ({'error' if self.ours.error else 'ok'}): {self.ours.content[:400]}"
        )


def compare(case: Case) -> Mismatch | None:
    ours, new_bills = run_project(case.domain, case.task, case.requestor, case.name, case.arguments)
    theirs = run_reference(case.domain, case.task, case.requestor, case.name, case.arguments, new_bills)
    if ours == theirs:
        return None
    return Mismatch(case, ours, theirs)


REFUSED = "Error: invalid arguments for "


def deviation(found: Mismatch) -> bool:
    """The one listed deviation: a write given an argument of the wrong JSON type that τ²-bench
    would run as given (storing "3" as a bag count, computing with a string): this project
    refuses it instead, so its database never holds a value of the wrong type."""
    return found.case.kind == "wrong_type" and found.ours.error and found.ours.content.startswith(REFUSED)
