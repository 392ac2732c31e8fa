"""The Textual workbench: live play and replay of ledger-tui sessions.

Only this package imports `textual`/`rich`; the engine stays headless. The UI consumes the engine's
typed events and never computes state differently from the fold in `ledger_tui.engine.store.fold`.
"""
