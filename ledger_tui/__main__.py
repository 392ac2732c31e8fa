from ledger_tui.cli import main

main()
