"""The CLI's tables, laid out by rich: column widths, alignment, wrapping and cutting are rich's.

They print as plain text through the CLI's `say`: no colour, no markup read in a cell (task ids and
mode names come from files), a rule of `-` under the header, and 80 columns unless --wide, when
every column takes the width of its longest cell.
"""

from __future__ import annotations

import io

from rich import box
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.table import Column, Table
from rich.text import Text

from ledger_tui.engine.outside import shown

WIDTH = 80  # what the tables fit in unless --wide

# no edges and no lines between columns or rows: only the rule under the header
RULE_UNDER_HEADER = box.Box("    \n    \n -- \n    \n    \n    \n    \n    \n", ascii=True)


def new_table(*columns: Column, padding: tuple[int, ...] = (0, 1)) -> Table:
    """A table of `columns`, two spaces apart (with `padding` (0, 0): one), a rule under the header."""
    return Table(
        *columns, box=RULE_UNDER_HEADER, show_edge=False, pad_edge=False, padding=padding, collapse_padding=True,
        header_style="", highlight=False,
    )


def number(header: str, min_width: int = 0) -> Column:
    """A column of figures: right-aligned, never wrapped."""
    return Column(header, justify="right", no_wrap=True, min_width=max(min_width, len(header)))


class Plain:
    """A cell of one line of printable ASCII, no space at either end, that rich lays out and prints
    exactly as `Text` of it, at a third of the cost: a table of a thousand cells spent most of its
    time in `Text`'s wrapping machinery, for text that fits its column as it is. Measured as `Text`
    measures (its widest word, its whole width); where it fits, it is the text, padded on the side
    `justify` says (left, right, or not at all, as `Text` does); anything else (too wide, centred)
    is left to `Text`. tests/eval/test_tables.py holds both to the same lines."""

    __slots__ = ("text", "width", "widest_word")

    def __init__(self, text: str) -> None:
        self.text = text
        self.width = len(text)
        self.widest_word = max(map(len, text.split()))

    @staticmethod
    def fits(text: str) -> bool:
        """Whether `text` can be a Plain cell."""
        return bool(text) and text.isascii() and text.isprintable() and text.strip() == text

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(self.widest_word, self.width)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        room = options.max_width - self.width
        justify = options.justify or "default"
        if room < 0 or justify not in ("default", "left", "right"):
            yield Text(self.text)
            return
        if justify == "right":
            yield Segment(" " * room + self.text)
        elif justify == "left":
            yield Segment(self.text + " " * room)
        else:
            yield Segment(self.text)
        yield Segment("\n")


def cell(value: object) -> Plain | Text:
    """Text from outside, as a cell: shown (`shown`), never parsed as markup."""
    text = shown(value)
    return Plain(text) if Plain.fits(text) else Text(text)


def lines(table: Table, wide: bool = False) -> list[str]:
    """The table as lines of text: 80 columns wide at most, or, `wide`, as wide as its cells."""
    console = Console(
        file=io.StringIO(), width=10**6 if wide else WIDTH, color_system=None, markup=False, highlight=False,
        emoji=False, soft_wrap=False, legacy_windows=False,
    )
    with console.capture() as captured:
        console.print(table)
    return [line.rstrip() for line in captured.get().splitlines()]
