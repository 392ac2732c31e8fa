"""Shipped example trajectories (data only): installed as `ledger_tui.sessions`, listed by
`ledger-tui examples`, opened by name (`ledger-tui replay airline-cancel-blocked`)."""
