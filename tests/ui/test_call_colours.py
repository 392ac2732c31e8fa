"""A jump shows other calls in the conversation's call items (they are reused, not mounted again);
each call's title then has the colour and style of its own verdict and outcome, never the one the
item had for the call it showed before."""

from __future__ import annotations

import random

from textual.widgets._collapsible import CollapsibleTitle

from ledger_tui.ui.app import make_app
from ledger_tui.ui.widgets.tool_call_item import ToolCallItem
from tests.ui.test_long_replay import long_trajectory


async def test_every_call_title_has_its_own_verdicts_colour_after_jumps(toy, tmp_path):
    path = await long_trajectory(toy, tmp_path, 3000)
    app = make_app(trajectory=path, domain=toy)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        rng = random.Random(5)
        kinds = set()
        for _ in range(12):
            screen.cursor = rng.randrange(len(screen.events))
            await pilot.pause()
            items = [w for w in screen.conversation.children if isinstance(w, ToolCallItem) and w.display]
            assert items
            drawn = [item.query_one(CollapsibleTitle).rich_style for item in items]
            for item in items:  # styles worked out afresh from each item's classes
                item.update_node_styles()
            assert [item.query_one(CollapsibleTitle).rich_style for item in items] == drawn
            kinds |= {frozenset(c for c in item.classes if c.startswith("-")) for item in items}
        assert len(kinds) >= 3, "calls of several verdicts and outcomes were shown"
