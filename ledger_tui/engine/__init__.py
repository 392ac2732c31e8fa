"""The headless LedgerAgent engine.

Nothing in this package draws or prints, and nothing imports `textual` or `rich`: the engine runs
the same under the TUI, the CLI and the evaluator, and a test proves the import boundary.

The method is in this folder: `events` (the typed stream), `ledger` and `observe` (what reads
put in it), `gate`, `rules` and `disclosure` (the checks on writes and reads), `domain` and
`environment` (what a domain declares, and its private database), `session` (the loop) and `fork`.
The rooms hold what the method uses: `conversation/` (what the customer said and answered),
`store/` (trajectories, the fold, databases), `model/` (the model client) and `agents/` (the
built-in agents and tasks).
"""
