"""Storage: trajectories on disk, the fold that gives the state at a step, databases and their digests.

`trajectories` writes and reads JSON Lines, `reading` reads files other tools wrote, `fold` turns
events into the state at a step, `cow` gives every session a private copy-on-write database,
`serialize` and `encoding` the text and digests, `schema` the trajectory format as a JSON Schema.
"""
