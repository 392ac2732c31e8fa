"""How much of anything from outside one session takes in, so its work and its trajectory are bounded.

The gate, the tokenizer and the readers are linear in what they read (no pattern backtracks over
a run of characters twice), and these caps bound what they read, so one turn's engine work has a
ceiling whatever the model, the customer or a `--db` file sends; `--timeout` bounds the model
call itself. Each cap is applied where the text enters a session and said in a notice; the model
is told in a tool error when its call was cut. `benchmarks/engine_bounds.py` prints the gate's and
the tokenizer's time from 1 KB to the caps.

With these caps the largest event a session writes stays well under the 16 MB a trajectory line
may hold (`reading.MAX_LINE_BYTES`); `store.TrajectoryWriter` refuses anything longer, so a run
never writes a line its own readers refuse.
"""

from __future__ import annotations

from typing import Any

# characters of one message: the customer's, the agent's (a model's reply text), the operator's
MAX_TEXT = 64 * 1024
# characters of the arguments of one model reply's calls together, as the JSON the model sent (a
# card repeats what its calls say, so the cap is on the reply, not on each call)
MAX_ARGUMENTS = 64 * 1024
# tool calls in one model reply; the ones after are dropped (and the model told)
MAX_CALLS = 32
# characters of a call id or a tool name
MAX_NAME = 256
# characters of one tool result passed on to the model and the ledger (the largest in τ²-bench's
# GPT-4.1 runs is 6,761; only a hand-made `--db` record reaches this). A gate decision may quote a
# record once for each check that read it, so this cap keeps its line under the readers' 16 MB.
MAX_RESULT = 128 * 1024
# tokens of one helper call's completion (engine.agents.irma; a lower --max-tokens lowers it): a
# checklist of 8 lines is about 150 tokens, and a small model that loops would otherwise spend the
# agent's whole cap on each helper call (seen with SmolLM2-135M on llama.cpp: 2,048 tokens)
HELPER_MAX_TOKENS = 512


def size(n: int) -> str:
    """`65,536 characters`."""
    return f"{n:,} characters"


def cut_text(text: str, whose: str) -> tuple[str, str | None]:
    """`text` at most MAX_TEXT characters, and the notice saying it was cut (None if it was not)."""
    if len(text) <= MAX_TEXT:
        return text, None
    notice = (
        f"{whose} was {size(len(text))} long; the first {size(MAX_TEXT)} are kept "
        "(the most ledger-tui takes in one message)."
    )
    return text[:MAX_TEXT], notice


def arguments_size(arguments: Any) -> int:
    """How many characters a call's arguments take as compact JSON (for arguments the server sent
    as an object rather than as JSON text)."""
    import json

    try:
        return len(json.dumps(arguments, ensure_ascii=False, separators=(",", ":")))
    except (TypeError, ValueError, RecursionError):
        return MAX_ARGUMENTS + 1


_ARGUMENTS_TAIL = "ledger-tui accepts in one reply"


def too_long_arguments(length: int, reply: bool = False) -> str:
    """Why a call's arguments were not used, as the model reads it (`reply`: they fit alone, but
    not with the calls before them in the same reply)."""
    what = f"the arguments of this reply's calls come to {size(length)}" if reply else f"the arguments are {size(length)} long"
    return f"{what}, more than the {size(MAX_ARGUMENTS)} {_ARGUMENTS_TAIL}"


def is_too_long(problem: str | None) -> bool:
    """Whether a call was refused for the size of its arguments (see `too_long_arguments`)."""
    return bool(problem) and problem.endswith(_ARGUMENTS_TAIL)  # type: ignore[union-attr]


def too_long_result(tool: str, length: int, ran: bool) -> str:
    """What the model reads instead of a tool result over MAX_RESULT."""
    done = "it ran, but its result" if ran else "its result"
    return (
        f"{tool}: {done} is {size(length)} long, more than the {size(MAX_RESULT)} ledger-tui passes on; "
        "nothing of it is shown or kept in the ledger"
    )


def arguments_problem(arguments: dict[str, Any]) -> str | None:
    """Why one call's arguments (an operator's or the customer's, alone in their turn) are not
    taken, or None when they fit the cap."""
    n = arguments_size(arguments) if arguments else 0
    return too_long_arguments(n) if n > MAX_ARGUMENTS else None


def short_name(name: str) -> str:
    return name if len(name) <= MAX_NAME else name[:MAX_NAME]
