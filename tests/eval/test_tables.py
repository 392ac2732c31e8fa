"""The CLI's tables (`ledger_tui.eval.tables`): a `Plain` cell is laid out and printed exactly as
rich's `Text` of the same text, in any column, at any width."""

from __future__ import annotations

import random

import pytest
from rich.table import Column
from rich.text import Text

from ledger_tui.engine.outside import shown
from ledger_tui.eval.tables import Plain, cell, lines, new_table, number

WORDS = ["1/2", "FAIL", "-", "31 (94)", "bench_12", "fixed by gate", "broken by full,", "x", "a-very-long-task-name-that-never-fits"]


def _text(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.1:
        return rng.choice(["", " ", " padded", "padded ", "tab\there", "two\nlines", "naïve", "日本語", "\u202eflip"])
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))


def _columns(rng: random.Random, n: int) -> list[Column]:
    out = []
    for i in range(n):
        if rng.random() < 0.4:
            out.append(number(f"h{i}", rng.choice([0, 6, 9])))
        else:
            out.append(Column(
                f"head {i}", justify=rng.choice(["left", "right", "center", "default", "full"]),
                no_wrap=rng.random() < 0.5, overflow=rng.choice(["fold", "crop", "ellipsis"]),
                max_width=rng.choice([None, None, 4, 10, 25]),
            ))
    return out


@pytest.mark.parametrize("seed", range(200))
def test_plain_cells_print_as_text_cells(seed: int):
    rng = random.Random(seed)
    n = rng.randint(1, 6)
    rows = [[_text(rng) for _ in range(n)] for _ in range(rng.randint(1, 12))]
    wide = rng.random() < 0.3
    padding = rng.choice([(0, 1), (0, 0)])
    fast = new_table(*_columns(random.Random(seed), n), padding=padding)
    slow = new_table(*_columns(random.Random(seed), n), padding=padding)
    for row in rows:
        fast.add_row(*map(cell, row))
        slow.add_row(*(Text(shown(value)) for value in row))  # what cell() made before
    assert lines(fast, wide) == lines(slow, wide)


def test_only_one_line_of_printable_ascii_with_no_outer_space_is_plain():
    assert isinstance(cell("fixed by gate, broken by full"), Plain)
    for text in ("", " lead", "trail ", "tab\there", "two\nlines", "naïve"):
        assert not isinstance(cell(text), Plain), text


def test_a_plain_cell_measures_as_its_text():
    import io

    from rich.console import Console
    from rich.measure import Measurement

    console = Console(file=io.StringIO(), width=80)
    rng = random.Random(7)
    texts = [t for t in (_text(rng) for _ in range(300)) if Plain.fits(t)]
    assert len(texts) > 200
    for width in (3, 12, 80):
        options = console.options.update_width(width)
        for text in texts:
            assert Measurement.get(console, options, Plain(text)) == Measurement.get(console, options, Text(text)), (text, width)
