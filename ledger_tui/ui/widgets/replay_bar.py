"""The replay cursor, visible: a step counter, a slider with gate decisions marked, the speed.

Clicking the slider chooses a step (`StepChosen`); the keys live on the replay screen so they can
be remapped in one place.

The counter changes at every step, the rest of the line rarely (a long trajectory moves the
cursor to the next cell of the slider once in hundreds of steps), so the line is drawn in two
pieces and the second is kept: a step draws the counter, not the slider's hundred-odd cells.
"""

from __future__ import annotations

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
    """Reactive `index`, `total`, `speed`, `playing`; `marks` are the steps of gate decisions."""

    index: reactive[int] = reactive(-1)
    total: reactive[int] = reactive(0)
    speed: reactive[float] = reactive(4.0)
    playing: reactive[bool] = reactive(False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.marks: dict[int, str] = {}
        self._track: tuple[tuple[int, int, int, int], list[tuple[str, str]]] | None = None
        self._tail: tuple[tuple[object, ...], Strip] | None = None  # the line after the counter

    def render(self) -> Text:
        head, slider_width, state = self._parts()
        text = Text(head, style="bold")
        self._append_tail(text, slider_width, state)
        return text

    def _parts(self) -> tuple[str, int, str]:
        """The counter with the slider's left end, the slider's width and the state after it."""
        width = max(self.size.width, 40)
        counter = f" step {self.index}/{max(self.total - 1, 0)} "
        state = f" {'▶ playing' if self.playing else 'paused'} {self.speed:g}/s "
        return f"{counter}▕", max(width - len(counter) - len(state) - 2, 10), state

    def _append_tail(self, text: Text, slider_width: int, state: str) -> None:
        text.append_text(self._slider(slider_width))
        text.append("▏")
        text.append(state)

    def render_line(self, y: int) -> Strip:
        """`render`'s line, drawn as the counter and the kept rest (the same cells and styles:
        the rest is drawn after as many blanks as the counter has cells, then cut from them)."""
        head, slider_width, state = self._parts()
        width = self.size.width
        if y or self.text_selection is not None or len(head) + slider_width + 1 + len(state) > width:
            return super().render_line(y)
        key = (width, len(head), self._cursor_cell(slider_width), self._track_key(slider_width), state, self.visual_style)
        if self._tail is None or self._tail[0] != key:
            rest = Text(" " * len(head), style="bold")
            self._append_tail(rest, slider_width, state)
            self._tail = (key, self._strip(rest, width).crop(len(head)))
        return Strip.join([self._strip(Text(head, style="bold"), len(head)), self._tail[1]])

    def _strip(self, text: Text, width: int) -> Strip:
        """`text` drawn as the widget draws what `render` returns."""
        return Visual.to_strips(self, visualize(self, text, markup=self._render_markup), width, 1, self.visual_style)[0]

    def notify_style_update(self) -> None:
        self._tail = None
        super().notify_style_update()

    def _track_key(self, width: int) -> tuple[int, int, int, int]:
        return (width, self.total, id(self.marks), len(self.marks))

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
            self._track = (key, cells)
        return list(self._track[1])

    def _slider(self, width: int) -> Text:
        cells = self._marked(width)
        x = self._cursor_cell(width)
        cells[x] = ("●", "cursor")
        text = Text()
        styles: dict[str, Style] = {}
        for i, (char, kind) in enumerate(cells):
            style = styles.get(kind)
            if style is None:
                if kind == "cursor":
                    style = self.get_component_rich_style("replay-bar--cursor", partial=True)
                elif kind:
                    style = self.get_component_rich_style(f"replay-bar--{kind.split('-')[1].lower()}", partial=True)
                else:
                    style = self.get_component_rich_style("replay-bar--track", partial=True)
                styles[kind] = style
            text.append("━" if not kind and i < x else char, style)
        return text

    COMPONENT_CLASSES = {
        "replay-bar--cursor",
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
