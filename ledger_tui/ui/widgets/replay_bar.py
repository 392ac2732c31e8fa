"""The replay cursor, visible: a step counter, a slider with gate decisions (and a search's
hits) marked, the speed.

Clicking the slider chooses a step (`StepChosen`); the keys live on the replay screen so they can
be remapped in one place.

The counter changes at every step and the cursor's cell on the slider at a jump; the slider's
hundred-odd marked cells and the state after it change only with the width, the marks or the
state. So the line is drawn in pieces, each as `render` would draw it: the counter, the slider up to
the cursor cut from a kept drawing of it filled, the cursor, and the rest cut from a kept drawing
of it unfilled.
"""

from __future__ import annotations

from typing import Iterable

from rich.style import Style
from rich.text import Text
from textual import events
from textual.reactive import reactive
from textual.strip import Strip
from textual.visual import Visual, visualize
from textual.widget import Widget

from ledger_tui.ui.messages import StepChosen

PREFIX_WIDTH = 18


class ReplayBar(Widget):
    """Reactive `index`, `total`, `speed`, `playing`; `marks` are the steps of gate decisions,
    `mark_hits(steps)` marks a search's hits over them, `branch` a fork's branching step."""

    index: reactive[int] = reactive(-1)
    total: reactive[int] = reactive(0)
    speed: reactive[float] = reactive(4.0)
    playing: reactive[bool] = reactive(False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.marks: dict[int, str] = {}
        self.hits: frozenset[int] = frozenset()  # the steps a search matched
        self.branch: int | None = None  # a fork's: the step its own events begin at (┳)
        self._hits_drawn = 0  # counts the hits' changes: the kept drawings are by it
        self._track: tuple[tuple[int, int, int, int, int, int | None], list[tuple[str, str]]] | None = None
        # the line after the counter drawn with the slider filled and unfilled, by what it shows
        # (the counter's width among it: a jump can change how many digits the step has)
        self._tails: dict[tuple[object, ...], tuple[Strip, Strip]] = {}

    def render(self) -> Text:
        head, slider_width, state = self._parts()
        text = Text(head, style="bold")
        x = self._cursor_cell(slider_width)
        self._append_tail(text, self._slider(slider_width, cursor=x, filled=x), state)
        return text

    def _parts(self) -> tuple[str, int, str]:
        """The counter with the slider's left end, the slider's width and the state after it."""
        width = max(self.size.width, 40)
        counter = f" step {self.index}/{max(self.total - 1, 0)} "
        state = f" {'▶ playing' if self.playing else 'paused'} {self.speed:g}/s "
        return f"{counter}▕", max(width - len(counter) - len(state) - 2, 10), state

    def _append_tail(self, text: Text, slider: Text, state: str) -> None:
        text.append_text(slider)
        text.append("▏")
        text.append(state)

    def render_line(self, y: int) -> Strip:
        """`render`'s line, from pieces: each drawn after as many blanks as cells come before it
        on the line, then cut from them, so its cells and styles are the ones `render` draws."""
        head, slider_width, state = self._parts()
        width, h = self.size.width, len(head)
        if y or self.text_selection is not None or h + slider_width + 1 + len(state) > width:
            return super().render_line(y)
        key = (width, h, self._track_key(slider_width), state, self.visual_style)
        tails = self._tails.get(key)
        if tails is None:
            if len(self._tails) >= 8:
                self._tails.clear()
            drawn = []
            for filled in (slider_width, 0):
                tail = Text(" " * h, style="bold")
                self._append_tail(tail, self._slider(slider_width, cursor=None, filled=filled), state)
                drawn.append(self._strip(tail, width))
            tails = self._tails[key] = (drawn[0], drawn[1])
        filled_tail, unfilled_tail = tails
        x = h + self._cursor_cell(slider_width)
        cursor = Text(" " * x, style="bold")
        cursor.append("●", self._style("cursor", {}))
        pieces = [self._strip(Text(head, style="bold"), h), filled_tail.crop(h, x), self._strip(cursor, x + 1).crop(x)]
        return Strip.join([*pieces, unfilled_tail.crop(x + 1, width)])

    def _strip(self, text: Text, width: int) -> Strip:
        """`text` drawn as the widget draws what `render` returns."""
        return Visual.to_strips(self, visualize(self, text, markup=self._render_markup), width, 1, self.visual_style)[0]

    def notify_style_update(self) -> None:
        self._tails.clear()
        super().notify_style_update()

    def mark_hits(self, steps: Iterable[int]) -> None:
        """Mark these steps (a search's hits) on the slider; none: the decisions alone again."""
        hits = frozenset(steps)
        if hits != self.hits:
            self.hits = hits
            self._hits_drawn += 1
            self.refresh()

    def _track_key(self, width: int) -> tuple[int, int, int, int, int, int | None]:
        return (width, self.total, id(self.marks), len(self.marks), self._hits_drawn, self.branch)

    def _cursor_cell(self, width: int) -> int:
        n = max(self.total - 1, 1)
        return min(width - 1, max(0, round(max(self.index, 0) * (width - 1) / n)))

    def _marked(self, width: int) -> list[tuple[str, str]]:
        """The track with the decisions marked, worked out once per width, length and marks (a
        trajectory of 100,000 events has thousands of marks; the cursor moves far more often)."""
        key = self._track_key(width)
        if self._track is None or self._track[0] != key:
            cells = [("─", "")] * width
            n = max(self.total - 1, 1)
            for step, verdict in self.marks.items():
                x = min(width - 1, round(step * (width - 1) / n))
                cells[x] = ("┃", f"verdict-{verdict}")
            if self.branch is not None:  # a fork: where it left its parent's events
                cells[min(width - 1, round(self.branch * (width - 1) / n))] = ("┳", "branch")
            for step in self.hits:  # over a decision's mark: the hit is what is looked for
                cells[min(width - 1, round(step * (width - 1) / n))] = ("◆", "hit")
            self._track = (key, cells)
        return list(self._track[1])

    def _slider(self, width: int, cursor: int | None, filled: int) -> Text:
        """The track, with the cursor on it (if any) and the unmarked cells before `filled` drawn
        as passed."""
        cells = self._marked(width)
        if cursor is not None:
            cells[cursor] = ("●", "cursor")
        text = Text()
        styles: dict[str, Style] = {}
        for i, (char, kind) in enumerate(cells):
            text.append("━" if not kind and i < filled else char, self._style(kind, styles))
        return text

    def _style(self, kind: str, styles: dict[str, Style]) -> Style:
        style = styles.get(kind)
        if style is None:
            if kind in ("cursor", "hit", "branch"):
                style = self.get_component_rich_style(f"replay-bar--{kind}", partial=True)
            elif kind:
                style = self.get_component_rich_style(f"replay-bar--{kind.split('-')[1].lower()}", partial=True)
            else:
                style = self.get_component_rich_style("replay-bar--track", partial=True)
            styles[kind] = style
        return style

    COMPONENT_CLASSES = {
        "replay-bar--cursor",
        "replay-bar--hit",
        "replay-bar--branch",
        "replay-bar--track",
        "replay-bar--allow",
        "replay-bar--revise",
        "replay-bar--block",
    }

    def on_click(self, event: events.Click) -> None:
        width = max(self.size.width, 40)
        counter = len(f" step {self.index}/{max(self.total - 1, 0)} ") + 1
        state = len(f" {'▶ playing' if self.playing else 'paused'} {self.speed:g}/s ")
        slider_width = max(width - counter - state - 1, 10)
        x = event.x - counter
        if 0 <= x < slider_width and self.total:
            self.post_message(StepChosen(round(x * (self.total - 1) / max(slider_width - 1, 1))))
