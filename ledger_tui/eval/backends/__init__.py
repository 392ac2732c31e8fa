"""Where an evaluation's runs execute: `local` (this process, one event loop), `processes`
(worker processes, each a share of the sessions: `--workers N`), `ray_cluster` with
`ray_actor` (Ray actors on a cluster: `--backend ray`); `shards` is what the last two share.
Each runs trials through `eval.trial` and hands every result to the caller's `record`;
`eval.runner.run_eval` picks one. None imports the runner."""
