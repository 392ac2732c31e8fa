"""Turning tool return values into the text a model reads, and databases into digests.

Both follow τ²-bench's conventions exactly (see tau2-compat §1.2 and §1.4) so that a digest computed
here can be compared with a published one and a tool message reads the same as in the benchmark.
"""

from __future__ import annotations

import datetime as _dt
import enum
import hashlib
import json
from typing import Any

from pydantic import BaseModel

from ledger_tui.engine.store.encoding import canonical_text, is_model_type

# The encoders of `json.dumps(value, default=str, ...)`, made once: `json.dumps` with any option
# makes a new encoder on every call, which costs more than encoding a small record.
_plain_text = json.JSONEncoder(default=str).encode
_compact_text = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode


def _convert(value: Any, inside_record: bool) -> Any:
    if is_model_type(type(value)):
        # a record whole, as τ²-bench's `to_json_str` dumps it: numbers stay numbers, dates and
        # str-valued enums are written by `json.dumps(..., default=str)`; a value of another type
        # than its field's (a bag count of 3.0) is written as it is, without pydantic's warning
        return value.model_dump(warnings=False)
    if isinstance(value, dict):
        return {k: _convert(v, inside_record) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_convert(v, inside_record) for v in value]
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, bool) or isinstance(value, (int, float)):
        return value if inside_record else str(value)
    if isinstance(value, (_dt.date, _dt.datetime)) and not inside_record:
        return value.isoformat()
    return value


def tool_text(value: Any) -> str:
    """The tool message for a successful call: strings verbatim, anything else as JSON text."""
    if isinstance(value, str):
        return value
    return _plain_text(_convert(value, inside_record=False))


def jsonable(value: Any) -> Any:
    """A plain-JSON view of a tool return, for the ledger (numbers stay numbers)."""
    from ledger_tui.engine.store.cow import CowRecords, is_cow

    if is_cow(value):
        return {name: jsonable(getattr(value, name)) for name in type(value).model_fields}
    if isinstance(value, CowRecords):
        return {k: jsonable(v) for k, v in value.materialize().items()}
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (_dt.date, _dt.datetime)):
        return str(value)
    return value


def digest(record: BaseModel | dict[str, Any]) -> str:
    """SHA-256 of the canonical dump: every field, keys sorted, `str()` for dates (τ²-bench §1.4)."""
    from ledger_tui.engine.store.cow import is_cow
    from ledger_tui.engine.store.cow_digest import cow_digest

    if is_cow(record):
        return cow_digest(record)  # type: ignore[arg-type]
    else:
        data = record.model_dump() if isinstance(record, BaseModel) else record
        text = canonical_text(data)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def compact(value: Any) -> str:
    """Deterministic compact JSON used by the ledger render."""
    return _compact_text(value)
