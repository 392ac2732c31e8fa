"""The two primitives databases and their copy-on-write views share: the canonical JSON text of a
value (τ²-bench's digest input: keys sorted, `str()` for what JSON lacks) and whether a type is a
pydantic model. Here, beneath both `serialize` and `cow`, so neither imports the other back."""

from __future__ import annotations

import json

from pydantic import BaseModel

# made once: `json.dumps` with any option makes a new encoder on every call, which costs more than
# encoding a small record
canonical_text = json.JSONEncoder(sort_keys=True, default=str).encode

_MODEL_TYPES: dict[type, bool] = {}  # type -> is it a pydantic model class


def is_model_type(t: type) -> bool:
    """Is `t` a pydantic model class? Told by a dict lookup after the first time: `isinstance(…,
    BaseModel)` asks the ABC machinery (Python code), which a call often finds out of the CPU's
    caches."""
    found = _MODEL_TYPES.get(t)
    if found is None:
        found = _MODEL_TYPES[t] = isinstance(t, type) and issubclass(t, BaseModel)
    return found
