"""The footer: Textual's, recomposed only when what it would show has changed.

Textual's footer removes its keys and mounts them again each time the screen says its bindings
changed. Opening a replay says so five times before the first frame (the screen mounted, the gate
log focused, the cursor set) for two different sets of keys: 88 keys composed, mounted and styled
where 36 show the same. A change of the keys shown, of their state or of how a key is displayed (a
keymap) still recomposes it."""

from __future__ import annotations

from typing import Any

from textual.widgets import Footer as TextualFooter


class Footer(TextualFooter):
    _shows: Any = None  # what the keys composed last were composed from

    def _showing(self) -> Any:
        app = self.app
        keys = tuple(
            (binding, enabled, tooltip, app.get_key_display(binding))
            for _, binding, enabled, tooltip in self.screen.active_bindings.values()
        )
        # (until the screen first says its bindings are ready, Textual's footer composes no key)
        return getattr(self, "_bindings_ready", True), keys, self.show_command_palette, app.ENABLE_COMMAND_PALETTE

    async def recompose(self) -> None:
        if not self.is_attached:
            return await super().recompose()
        shows = self._showing()
        if shows == self._shows:
            return None
        self._shows = shows
        return await super().recompose()
