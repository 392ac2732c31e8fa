"""The digest of a copy-on-write database, spliced instead of re-serialized.

Every tool call and every trial's end asks for the database's digest (`serialize.digest`); writing
out a whole database's canonical text for each would cost more than the session. The text is cut
into per-record chunks once per pristine database (a *plan*): pristine records' texts are computed
once per process, touched records' texts for each digest, and hashing starts from a saved SHA-256
state just before the first record that differs (a collection with keys added or removed is
rewritten from its first change on). The result is byte-for-byte the text `serialize.digest` hashes
for an ordinary database. It reads the session's `CowRecords` (`cow.py`) from the inside.
"""

from __future__ import annotations

import bisect
import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from ledger_tui.engine.store.cow import CowRecords
from ledger_tui.engine.store.encoding import canonical_text


def canonical(value: Any) -> str:
    data = value.model_dump() if isinstance(value, BaseModel) else value
    return canonical_text(data)


def _fragment(key: str, record: Any) -> str:
    """A record's entry in its collection's canonical text: `"key": {…}`."""
    return f"{json.dumps(key)}: {canonical(record)}"


def _dump_value(model: BaseModel, name: str) -> Any:
    value = getattr(model, name)
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, dict):
        return {k: (v.model_dump() if isinstance(v, BaseModel) else v) for k, v in value.items()}
    if isinstance(value, list):
        return [v.model_dump() if isinstance(v, BaseModel) else v for v in value]
    return value


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
    # shared field -> (chunk index of its "{", its pristine keys sorted): pristine key j is chunk
    # opening + 1 + j, and "}" follows the last
    spans: dict[str, tuple[int, list[str]]]
    blocks: list[bytes]  # the chunks of each stride joined: what is hashed where nothing changed
    key: tuple[int, ...]


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
    spans: dict[str, tuple[int, list[str]]] = {}
    for i, name in enumerate(names):
        prefix = (", " if i else "") + f"{json.dumps(name)}: "
        value = getattr(model, name)
        if not isinstance(value, CowRecords):
            fields[name] = len(chunks)
            chunks.append((prefix + canonical_text(_dump_value(model, name))).encode())
            continue
        keys = sorted(value._base)
        spans[name] = (len(chunks), keys)
        chunks.append((prefix + "{").encode())
        for j, k in enumerate(keys):
            fragment = value._texts.get(k)
            if fragment is None:
                fragment = value._texts[k] = _fragment(k, value._base[k])
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
    blocks = [b"".join(chunks[i : i + _STRIDE]) for i in range(0, len(chunks), _STRIDE)]
    plan = _PLANS[key] = _Plan(chunks, index, fields, checkpoints, h.hexdigest(), spans, blocks, key)
    return plan


def _rewrite_span(cow: CowRecords, span: tuple[int, list[str]], dirty: dict[int, bytes]) -> int | None:
    """The text of a collection with keys added or removed, from its first change on, put in
    `dirty` over the pristine chunks from there to its closing brace. Returns the first chunk
    rewritten (the records before it are pristine keys, all there, spliced as usual), or None
    when the keys are the pristine ones after all (removed, then added again)."""
    opening, keys = span
    gone = cow._removed.difference(cow._added)
    added = sorted(k for k in cow._added if k not in cow._base)
    if not gone and not added:
        return None
    start = min([bisect.bisect_left(keys, k) for k in gone] + ([bisect.bisect_left(keys, added[0])] if added else []))
    own, texts, base = cow._own, cow._texts, cow._base
    parts = []
    fresh = iter(added)
    new = next(fresh, None)
    for k in keys[start:]:
        while new is not None and new < k:
            parts.append(_fragment(new, own[new]))
            new = next(fresh, None)
        if k in gone:
            continue
        mine = own.get(k)
        if mine is not None:
            parts.append(_fragment(k, mine))
        else:
            parts.append(texts.get(k) or _fragment(k, base[k]))
    while new is not None:
        parts.append(_fragment(new, own[new]))
        new = next(fresh, None)
    first = opening + 1 + start
    text = ", ".join(parts)
    if parts and start:
        text = ", " + text
    dirty[first] = (text + "}").encode()
    for i in range(first + 1, opening + 2 + len(keys)):
        dirty[i] = b""
    return first


def cow_digest(model: BaseModel) -> str:
    """SHA-256 of the canonical text, equal to `serialize.digest` of the same data."""
    cows = {n: v for n, v in model.__dict__.items() if isinstance(v, CowRecords)}
    plan = _plan(model)
    dirty: dict[int, bytes] = {}  # chunk index -> its text now (b"" for none)
    for name, cow in cows.items():
        first = _rewrite_span(cow, plan.spans[name], dirty) if cow._changed() else None
        for k, record in cow._own.items():
            i = plan.index.get((name, k))
            if i is None or (first is not None and i >= first):
                continue  # an added record, or one the rewritten part holds
            chunk = ((", " if plan.chunks[i][:2] == b", " else "") + _fragment(k, record)).encode()
            if chunk != plan.chunks[i]:
                dirty[i] = chunk
    names = sorted(type(model).model_fields)
    for name, i in plan.fields.items():
        prefix = (", " if names.index(name) else "") + f"{json.dumps(name)}: "
        chunk = (prefix + canonical_text(_dump_value(model, name))).encode()
        if chunk != plan.chunks[i]:
            dirty[i] = chunk
    if not dirty:
        return plan.digest
    # the same changes as a session before (every trial that ends in the gold state, the gold run
    # itself): the same digest. Only small changes are kept (a record rewritten from an added key
    # on can be most of a collection).
    seen = (plan.key, tuple(sorted(dirty.items()))) if sum(map(len, dirty.values())) <= _SEEN_BYTES else None
    digest = _SEEN.get(seen) if seen is not None else None
    if digest is not None:
        _SEEN.move_to_end(seen)
        return digest
    first = min(dirty) // _STRIDE
    h = plan.checkpoints[first].copy()
    chunks = plan.chunks
    for b in range(first, len(plan.blocks)):
        start = b * _STRIDE
        if any(i in dirty for i in range(start, start + _STRIDE)):
            for i in range(start, min(start + _STRIDE, len(chunks))):
                h.update(dirty.get(i, chunks[i]))
        else:
            h.update(plan.blocks[b])
    digest = h.hexdigest()
    if seen is not None:
        _SEEN[seen] = digest
        if len(_SEEN) > _SEEN_MAX:
            _SEEN.popitem(last=False)
    return digest


# digests of the changes sessions made, most recent last: at most 1,024 of at most 16 KB each
_SEEN: OrderedDict[tuple[Any, ...], str] = OrderedDict()
_SEEN_MAX, _SEEN_BYTES = 1024, 16_384
