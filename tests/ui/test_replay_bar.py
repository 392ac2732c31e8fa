"""The replay bar draws the line its `render` describes after every change: the counter at each step,
the cursor moving along the slider, the marks, the speed and play state, another width."""

from __future__ import annotations

from textual.strip import Strip
from textual.visual import Visual, visualize

from ledger_tui.ui.app import make_app
from ledger_tui.ui.widgets import ReplayBar
from tests.ui.test_long_replay import long_trajectory


def drawn(bar: ReplayBar) -> list[tuple[str, object]]:
    """What the screen gets for the bar: each cell run's text and style."""
    return [(segment.text, segment.style) for segment in bar.render_line(0)]


def described(bar: ReplayBar) -> list[tuple[str, object]]:
    """The bar's `render`, drawn whole, as a widget draws what `render` returns."""
    visual = visualize(bar, bar.render())
    strip: Strip = Visual.to_strips(bar, visual, bar.size.width, 1, bar.visual_style)[0]
    return [(segment.text, segment.style) for segment in strip]


async def test_the_bar_shows_its_line_after_every_change(toy, tmp_path):
    path = await long_trajectory(toy, tmp_path, 900)
    app = make_app(trajectory=path, domain=toy, step=0)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = app.screen
        bar = screen.query_one(ReplayBar)
        seen = set()
        changes = ["step"] * 30 + ["jump", "faster", "step", "play", "pause", "jump", "resize", "step", "jump"]
        for change in [*changes, "last", "step back", "first"]:  # the cursor at both ends too
            if change == "step":
                screen.cursor += 1
            elif change == "jump":
                screen.cursor = (screen.cursor + 377) % len(screen.events)
            elif change in ("first", "last"):
                screen.cursor = 0 if change == "first" else len(screen.events) - 1
            elif change == "step back":
                screen.cursor -= 1
            elif change == "faster":
                screen.action_faster()
            elif change == "play":
                screen.action_play()
            elif change == "pause":
                screen.action_pause()
            else:
                await pilot.resize_terminal(150, 30)
            await pilot.pause()
            line = drawn(bar)
            assert line == described(bar), change
            assert "".join(text for text, _ in line).startswith(f" step {screen.cursor}/{len(screen.events) - 1} ▕")
            seen.add("".join(text for text, _ in line).index("●"))
        assert len(seen) > 3, "the cursor moved along the slider"
