"""The command line's commands, grouped by what a user does with them: running sessions
(`running`), reading recorded runs (`reading`), evaluating (`evaluation`), the domains (`domains`)
and the trajectory format (`export`); what they share is in `shared`. `ledger_tui.cli` registers
them, in the order `ledger-tui --help` lists them."""
