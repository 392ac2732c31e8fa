"""Copy-on-write databases: every session gets a private database without copying all of it.

A domain's database is validated once per process (the *pristine* copy). A session's database is a
shallow shell over it: each top-level collection of records (`flights`, `users`, `orders`, …)
becomes a `CowRecords` mapping that hands out the shared pristine record while a *read* tool runs
and a private deep copy of a record the first time anything else touches it. Inserting and deleting
keys only changes the session's own key list.

The digest is spliced from per-record canonical texts: pristine records' texts are computed once
per process, touched records' texts for each digest. The result is byte-for-byte the text
`serialize.digest` hashes for an ordinary database, at a fraction of the cost.
"""

from __future__ import annotations

import copy
import hashlib
import json
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, MutableMapping

from pydantic import BaseModel


_SORTED = "\x00sorted keys"  # a key no record can have: where the shared cache keeps the key order


class CowRecords(MutableMapping[str, Any]):
    __slots__ = ("_base", "_keys", "_own", "_texts", "_reading")

    def __init__(self, base: dict[str, BaseModel], texts: dict[str, str]) -> None:
        self._base = base
        # the key set, in order; the pristine dict itself until a key is added or removed (copying
        # thousands of keys for every session costs more than the rest of its set-up)
        self._keys: dict[str, Any] = base
        self._own: dict[str, Any] = {}
        self._texts = texts  # shared: canonical text of each pristine record, filled lazily
        self._reading = False

    def _own_keys(self) -> dict[str, Any]:
        if self._keys is self._base:
            self._keys = dict.fromkeys(self._base)
        return self._keys

    def __getitem__(self, key: str) -> Any:
        own = self._own.get(key)
        if own is not None:
            return own
        if key not in self._keys:
            raise KeyError(key)
        record = self._base[key]
        if self._reading:
            return record
        mine = self._own[key] = record.model_copy(deep=True)
        return mine

    def __setitem__(self, key: str, value: Any) -> None:
        if key not in self._keys:
            self._own_keys()[key] = None
        self._own[key] = value

    def __delitem__(self, key: str) -> None:
        del self._own_keys()[key]
        self._own.pop(key, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __repr__(self) -> str:
        return f"CowRecords({len(self._keys)} records, {len(self._own)} private)"

    def canonical(self) -> str:
        """Sorted-key JSON of the whole collection, as `json.dumps(..., sort_keys=True)` writes it.

        Fragments (`"key": {…}`) of pristine records are cached in the shared `texts`, so a session
        that touched a few records pays only for those few plus one join."""
        texts = self._texts
        if len(self._keys) == len(self._base) and all(k in self._base for k in self._own):
            keys = texts.get(_SORTED)
            if keys is None:
                keys = texts[_SORTED] = sorted(self._base)  # type: ignore[assignment]
        else:
            keys = sorted(self._keys)  # type: ignore[assignment]
        parts = []
        own = self._own
        for key in keys:  # type: ignore[union-attr]
            mine = own.get(key)
            if mine is not None:
                parts.append(f"{json.dumps(key)}: {canonical(mine)}")
                continue
            fragment = texts.get(key)
            if fragment is None:
                fragment = texts[key] = f"{json.dumps(key)}: {canonical(self._base[key])}"
            parts.append(fragment)
        return "{" + ", ".join(parts) + "}"

    def materialize(self) -> dict[str, Any]:
        return {key: self._own.get(key) or self._base[key] for key in self._keys}


def canonical(value: Any) -> str:
    data = value.model_dump() if isinstance(value, BaseModel) else value
    return json.dumps(data, sort_keys=True, default=str)


def record_fields(model: BaseModel) -> list[str]:
    """Top-level fields holding a dict of records: the collections worth sharing."""
    out = []
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, dict) and value and all(isinstance(v, BaseModel) for v in value.values()):
            out.append(name)
    return out


def cow_copy(pristine: BaseModel, texts: dict[str, dict[str, str]], shared: Iterable[str] | None = None) -> BaseModel:
    """A session database over `pristine`; `texts` is the shared per-field text cache and `shared`
    the pristine copy's `record_fields` (computed here when not given; it scans every record)."""
    fields: dict[str, Any] = {}
    shared = set(record_fields(pristine) if shared is None else shared)
    for name in type(pristine).model_fields:
        value = getattr(pristine, name)
        if name in shared:
            fields[name] = CowRecords(value, texts.setdefault(name, {}))
        else:
            fields[name] = copy.deepcopy(value)
    return _cow_class(type(pristine)).model_construct(**fields)


_COW_CLASSES: dict[type, type] = {}


def _cow_class(cls: type[BaseModel]) -> type[BaseModel]:
    """A subclass of the database model whose dumps see through the copy-on-write collections,
    so code that calls `db.model_dump()` keeps working."""
    sub = _COW_CLASSES.get(cls)
    if sub is None:

        def plain(self: BaseModel) -> BaseModel:
            values = {n: (v.materialize() if isinstance(v, CowRecords) else v) for n, v in self.__dict__.items()}
            return cls.model_construct(**values)

        def model_dump(self: BaseModel, **kwargs: Any) -> Any:
            return plain(self).model_dump(**kwargs)

        def model_dump_json(self: BaseModel, **kwargs: Any) -> str:
            return plain(self).model_dump_json(**kwargs)

        sub = type(cls.__name__, (cls,), {"model_dump": model_dump, "model_dump_json": model_dump_json, "__module__": cls.__module__})
        _COW_CLASSES[cls] = sub
    return sub


def is_cow(model: Any) -> bool:
    return isinstance(model, BaseModel) and any(isinstance(v, CowRecords) for v in model.__dict__.values())


def cow_canonical(model: BaseModel) -> str:
    """The canonical JSON text of a copy-on-write database (same bytes as for a plain one)."""
    parts = []
    for name in sorted(type(model).model_fields):
        value = getattr(model, name)
        if isinstance(value, CowRecords):
            text = value.canonical()
        else:
            text = json.dumps(_dump_value(model, name), sort_keys=True, default=str)
        parts.append(f"{json.dumps(name)}: {text}")
    return "{" + ", ".join(parts) + "}"


def _dump_value(model: BaseModel, name: str) -> Any:
    value = getattr(model, name)
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, dict):
        return {k: (v.model_dump() if isinstance(v, BaseModel) else v) for k, v in value.items()}
    if isinstance(value, list):
        return [v.model_dump() if isinstance(v, BaseModel) else v for v in value]
    return value


@contextmanager
def reading(model: Any) -> Iterator[None]:
    """While a read tool runs, hand out shared pristine records instead of private copies."""
    collections = [v for v in getattr(model, "__dict__", {}).values() if isinstance(v, CowRecords)]
    for c in collections:
        c._reading = True
    try:
        yield
    finally:
        for c in collections:
            c._reading = False


# ----------------------------------------------------------------------------- digests

_STRIDE = 32


@dataclass
class _Plan:
    """The pristine database's canonical text cut into chunks (one per record, separators
    included), with the SHA-256 state saved every `_STRIDE` chunks, so a session that changed a
    few records re-hashes only from the first changed record on."""

    chunks: list[bytes]
    index: dict[tuple[str, str], int]  # (field, record key) -> chunk index
    fields: dict[str, int]  # non-shared field -> chunk index of its whole text
    checkpoints: list[Any]
    digest: str


_PLANS: dict[tuple[int, ...], _Plan] = {}


def _plan(model: BaseModel) -> _Plan:
    names = sorted(type(model).model_fields)
    key = tuple(id(getattr(model, n)._base) for n in names if isinstance(getattr(model, n), CowRecords))
    plan = _PLANS.get(key)
    if plan is not None:
        return plan
    chunks: list[bytes] = [b"{"]
    index: dict[tuple[str, str], int] = {}
    fields: dict[str, int] = {}
    for i, name in enumerate(names):
        prefix = (", " if i else "") + f"{json.dumps(name)}: "
        value = getattr(model, name)
        if not isinstance(value, CowRecords):
            fields[name] = len(chunks)
            chunks.append((prefix + json.dumps(_dump_value(model, name), sort_keys=True, default=str)).encode())
            continue
        chunks.append((prefix + "{").encode())
        for j, k in enumerate(sorted(value._base)):
            fragment = value._texts.get(k)
            if fragment is None:
                fragment = value._texts[k] = f"{json.dumps(k)}: {canonical(value._base[k])}"
            index[(name, k)] = len(chunks)
            chunks.append(((", " if j else "") + fragment).encode())
        chunks.append(b"}")
    chunks.append(b"}")
    checkpoints = []
    h = hashlib.sha256()
    for i, chunk in enumerate(chunks):
        if i % _STRIDE == 0:
            checkpoints.append(h.copy())
        h.update(chunk)
    plan = _PLANS[key] = _Plan(chunks, index, fields, checkpoints, h.hexdigest())
    return plan


def cow_digest(model: BaseModel) -> str:
    """SHA-256 of the canonical text, equal to `serialize.digest` of the same data."""
    cows = {n: v for n, v in model.__dict__.items() if isinstance(v, CowRecords)}
    if any(len(c._keys) != len(c._base) or any(k not in c._base for k in c._own) for c in cows.values()):
        return hashlib.sha256(cow_canonical(model).encode()).hexdigest()  # keys added or removed
    plan = _plan(model)
    dirty: dict[int, bytes] = {}
    for name, cow in cows.items():
        for k, record in cow._own.items():
            i = plan.index[(name, k)]
            chunk = ((", " if plan.chunks[i][:2] == b", " else "") + f"{json.dumps(k)}: {canonical(record)}").encode()
            if chunk != plan.chunks[i]:
                dirty[i] = chunk
    names = sorted(type(model).model_fields)
    for name, i in plan.fields.items():
        prefix = (", " if names.index(name) else "") + f"{json.dumps(name)}: "
        chunk = (prefix + json.dumps(_dump_value(model, name), sort_keys=True, default=str)).encode()
        if chunk != plan.chunks[i]:
            dirty[i] = chunk
    if not dirty:
        return plan.digest
    first = min(dirty)
    start = (first // _STRIDE) * _STRIDE
    h = plan.checkpoints[first // _STRIDE].copy()
    chunks = plan.chunks
    for i in range(start, len(chunks)):
        h.update(dirty.get(i, chunks[i]))
    return h.hexdigest()
