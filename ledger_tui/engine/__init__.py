"""The headless LedgerAgent engine.

Nothing in this package draws or prints, and nothing imports `textual` or `rich`: the engine runs
the same under the TUI, the CLI and the evaluator, and a test proves the import boundary.
"""
