"""Evaluation: simulated customers, grading as τ²-bench does, pass^k over repeated trials, ablations."""
