"""Copy-on-write databases: every session gets a private database without copying all of it.

A domain's database is validated once per process (the *pristine* copy). A session's database is a
shallow shell over it: each top-level collection of records (`flights`, `users`, `orders`, …)
becomes a `CowRecords` mapping. `records[key]` hands out a private copy of a record the first time
a write (or anything outside a read tool) asks for it, and that copy from then on; while a read
tool runs, and through `look(records, key)` (a write's lookups of records it does not change: the
flights an airline write prices, the product a retail exchange checks), it hands out the shared
pristine record itself. Inserting and deleting keys only changes the session's own key list.

A shared record cannot be changed by mistake: the first time it is handed out it is *frozen* in
place (its models become read-only subclasses, its dicts and lists read-only subclasses of dict
and list), so setting a field, assigning or appending to it raises `SharedRecordChanged` instead of
changing every session's database. `thaw` (a fast deep copy) turns a frozen record into an
ordinary private one; `copy.copy`, `copy.deepcopy` and `model_copy` of a frozen record do too.

Such a database's digest is spliced from per-record canonical texts rather than re-serialized:
`cow_digest.py`.
"""

from __future__ import annotations

import copy
from typing import Any, Iterable, Iterator, MutableMapping

from pydantic import BaseModel

from ledger_tui.engine.store.encoding import is_model_type


# ----------------------------------------------------------------------------- shared records


class SharedRecordChanged(TypeError):
    """Code tried to change a record shared by every session (it must ask for a private copy)."""

    def __init__(self, what: str) -> None:
        super().__init__(
            f"{what}: this record is shared by every session and cannot be changed here; "
            "fetch it with records[key] (a private copy) to change it"
        )


def _refuse(name: str) -> Any:
    def refuse(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise SharedRecordChanged(f"{type(self).__name__}.{name}")

    refuse.__name__ = name
    return refuse


class _FrozenDict(dict):  # type: ignore[type-arg]
    """A dict inside a shared record: readable as any dict, never changed."""

    __slots__ = ()

    def __copy__(self) -> dict:  # type: ignore[type-arg]
        return thaw(self)

    def __deepcopy__(self, memo: Any) -> dict:  # type: ignore[type-arg]
        return thaw(self)

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (dict, (dict(self),))


class _FrozenList(list):  # type: ignore[type-arg]
    """A list inside a shared record: readable as any list, never changed."""

    __slots__ = ()

    def __copy__(self) -> list:  # type: ignore[type-arg]
        return thaw(self)

    def __deepcopy__(self, memo: Any) -> list:  # type: ignore[type-arg]
        return thaw(self)

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (list, (list(self),))


for _name in ("__setitem__", "__delitem__", "__ior__", "clear", "pop", "popitem", "setdefault", "update"):
    setattr(_FrozenDict, _name, _refuse(_name))
for _name in ("__setitem__", "__delitem__", "__iadd__", "__imul__", "append", "clear", "extend", "insert", "pop",
              "remove", "reverse", "sort"):  # fmt: skip
    setattr(_FrozenList, _name, _refuse(_name))
del _name

_FROZEN: dict[type, type] = {}  # model class -> its read-only subclass
# the types of shared (frozen) values: the read-only dict and list and each read-only model class
_SHARED_TYPES: set[type] = {_FrozenDict, _FrozenList}
_THAWED: dict[type, type] = {}  # read-only subclass -> model class


def _frozen_class(cls: type[BaseModel]) -> type[BaseModel]:
    sub = _FROZEN.get(cls)
    if sub is None:

        def __setattr__(self: BaseModel, name: str, value: Any) -> None:
            raise SharedRecordChanged(f"{cls.__name__}.{name}")

        def __delattr__(self: BaseModel, name: str) -> None:
            raise SharedRecordChanged(f"{cls.__name__}.{name}")

        def __copy__(self: BaseModel) -> BaseModel:
            return thaw(self)

        def __deepcopy__(self: BaseModel, memo: Any = None) -> BaseModel:
            return thaw(self)

        namespace = {
            "__slots__": (), "__module__": cls.__module__, "__qualname__": cls.__qualname__,
            "__setattr__": __setattr__, "__delattr__": __delattr__, "__copy__": __copy__, "__deepcopy__": __deepcopy__,
        }  # fmt: skip
        sub = type(cls)(cls.__name__, (cls,), namespace)
        _FROZEN[cls] = sub
        _THAWED[sub] = cls
        _SHARED_TYPES.add(sub)
    return sub


_ATOMS = frozenset({str, int, float, bool, type(None)})


def freeze(value: Any) -> Any:
    """Make a pristine record read-only in place (its models) and return it; dicts and lists are
    returned as read-only copies for the caller to put in their place. Idempotent."""
    t = type(value)
    if t in _ATOMS or t in _THAWED or t is _FrozenDict or t is _FrozenList:
        return value
    if t is dict:
        return _FrozenDict({k: freeze(v) for k, v in value.items()})
    if t is list:
        return _FrozenList([freeze(v) for v in value])
    if isinstance(value, BaseModel):
        fields = value.__dict__
        for name, item in fields.items():
            fields[name] = freeze(item)
        if value.__pydantic_extra__:
            for name, item in value.__pydantic_extra__.items():
                value.__pydantic_extra__[name] = freeze(item)
        object.__setattr__(value, "__class__", _frozen_class(t))
    return value


_COPIED: dict[type, type] = {}  # model class (or its read-only subclass) -> the class of its copies
_set = object.__setattr__


def thaw(value: Any) -> Any:
    """A private deep copy of a record, shared or not, with ordinary (changeable) classes: what
    `model_copy(deep=True)` gives, several times faster."""
    t = type(value)
    if t in _ATOMS:
        return value
    if t is dict or t is _FrozenDict:
        return {k: (v if type(v) in _ATOMS else thaw(v)) for k, v in value.items()}
    if t is list or t is _FrozenList:
        return [v if type(v) in _ATOMS else thaw(v) for v in value]
    cls = _COPIED.get(t)
    if cls is None:
        if not isinstance(value, BaseModel):
            return copy.deepcopy(value)
        cls = _COPIED[t] = _THAWED.get(t, t)
    return _model_copy(cls, value, {k: (v if type(v) in _ATOMS else thaw(v)) for k, v in value.__dict__.items()})


def _model_copy(cls: type, value: Any, fields: dict[str, Any]) -> Any:
    """A new `cls` instance holding `fields`, with `value`'s fields-set, extra and private state
    copied (no validation: the values are `value`'s own, or copies of them)."""
    new = cls.__new__(cls)
    _set(new, "__dict__", fields)
    _set(new, "__pydantic_fields_set__", set(value.__pydantic_fields_set__))
    extra = value.__pydantic_extra__
    _set(new, "__pydantic_extra__", None if extra is None else thaw(extra))
    private = value.__pydantic_private__
    _set(new, "__pydantic_private__", None if private is None else copy.deepcopy(private))
    return new


def is_frozen(value: Any) -> bool:
    return type(value) in _SHARED_TYPES


def private(value: Any) -> Any:
    """`value` if it is not shared, else a private copy of it (to put inside a private record)."""
    return thaw(value) if is_frozen(value) else value


def _shell(value: Any) -> Any:
    """A private copy of one level of a shared value: its children stay shared (and frozen)."""
    t = type(value)
    if t is _FrozenDict:
        return dict(value)
    if t is _FrozenList:
        return list(value)
    return _model_copy(_THAWED[t], value, dict(value.__dict__))


def _complete(value: Any) -> None:
    """Replace every shared part left inside a private value by a private copy, in place."""
    if isinstance(value, BaseModel):
        fields = value.__dict__
    elif type(value) is dict:
        fields = value
    elif type(value) is list:
        for i, item in enumerate(value):
            if is_frozen(item):
                value[i] = thaw(item)
            elif type(item) not in _ATOMS:
                _complete(item)
        return
    else:
        return
    for name, item in fields.items():
        if is_frozen(item):
            fields[name] = thaw(item)
        elif type(item) not in _ATOMS:
            _complete(item)


_CONTAINERS = frozenset({dict, list, _FrozenDict, _FrozenList})


def _child(node: Any, step: Any) -> Any:
    # (dicts and lists told by their type alone; a model by a dict lookup, not the ABC check)
    t = type(node)
    if t in _CONTAINERS or not is_model_type(t):
        return node[step]
    return getattr(node, step)


# pristine collections whose records are frozen (by id; the dict is kept so the id stays its own)
_FROZEN_BASES: dict[int, dict[str, Any]] = {}


class CowRecords(MutableMapping[str, Any]):
    __slots__ = ("_base", "_added", "_removed", "_own", "_partial", "_texts", "_reading")

    def __init__(self, base: dict[str, BaseModel], texts: dict[str, str]) -> None:
        if id(base) not in _FROZEN_BASES:
            for record in base.values():
                freeze(record)
            _FROZEN_BASES[id(base)] = base  # kept alive: its id stays its own
        self._base = base
        # the key set is the pristine one less `_removed`, then `_added` in order (copying thousands
        # of keys, for a session or for a write that adds a record, costs more than the write)
        self._added: dict[str, None] = {}
        self._removed: set[str] = set()
        self._own: dict[str, Any] = {}
        # keys of private records that still share parts with the pristine one (made by `edit`)
        self._partial: set[str] = set()
        self._texts = texts  # shared: canonical text of each pristine record, filled lazily
        self._reading = False

    def _changed(self) -> bool:
        """Were keys added or removed?"""
        return bool(self._added or self._removed)

    def __getitem__(self, key: str) -> Any:
        own = self._own.get(key)
        if own is not None:
            if key in self._partial and not self._reading:
                _complete(own)
                self._partial.discard(key)
            return own
        if key in self._removed:  # (a key removed, then added again, has its own record)
            raise KeyError(key)
        shared = self._base[key]  # the pristine record (frozen); KeyError when there is none
        if self._reading:
            return shared
        mine = self._own[key] = thaw(shared)
        return mine

    def look(self, key: str) -> Any:
        """The record to look at, not to change: the session's own copy if it has one, else the
        shared pristine record (read-only: changing it raises `SharedRecordChanged`). A write's
        lookups go through here, so it is kept to three dict and set lookups."""
        own = self._own.get(key)
        if own is not None:
            return own
        if key in self._removed:
            raise KeyError(key)
        return self._base[key]

    def edit(self, key: str, *path: Any, shallow: bool = False) -> Any:
        """The part of a record at `path` (field names, keys, list indexes), private, to change:
        copied whole, with only the levels above it copied on the way (a booking changes one
        date of a flight without copying its other dates). With `shallow`, only that level is
        copied: its own fields or items can be set, added or removed, while what they hold stays
        shared and read-only (a certificate added to a user's payment methods copies none of
        the others). The rest of the record stays shared until the whole record is asked for
        (`records[key]`)."""
        return self._edit(key, path, shallow)

    def _edit(self, key: str, path: tuple[Any, ...], shallow: bool) -> Any:
        own = self._own.get(key)
        if own is None:
            if key in self._removed or key not in self._base:
                raise KeyError(key)  # (an added key has its own record)
            own = self._own[key] = _shell(self._base[key])
            self._partial.add(key)
        elif key not in self._partial:
            node = own
            for step in path:
                node = _child(node, step)
            return node
        # down the path, each level private (a shared child is copied one level, or whole at the
        # end unless `shallow`), written inline: this is a write's first touch of its record
        node, last, shared = own, len(path) - 1, _SHARED_TYPES
        for i, step in enumerate(path):
            t = type(node)
            model = t not in _CONTAINERS and is_model_type(t)
            child = getattr(node, step) if model else node[step]
            if type(child) in shared:
                child = thaw(child) if i == last and not shallow else _shell(child)
                if model:
                    node.__dict__[step] = child
                else:
                    node[step] = child
            elif i == last and not shallow:
                _complete(child)
            node = child
        if not path and not shallow:
            _complete(own)
            self._partial.discard(key)
        return node

    def values(self) -> Any:
        if not self._reading:
            return super().values()
        own, base = self._own, self._base
        if not own and not self._changed():
            return base.values()
        return [own[k] if k in own else base[k] for k in self]

    def items(self) -> Any:
        if not self._reading:
            return super().items()
        own, base = self._own, self._base
        if not own and not self._changed():
            return base.items()
        return [(k, own[k] if k in own else base[k]) for k in self]

    def __setitem__(self, key: str, value: Any) -> None:
        if key not in self:
            self._added[key] = None  # a pristine key deleted before stays in `_removed`: it is last now
        self._own[key] = value
        self._partial.discard(key)

    def __delitem__(self, key: str) -> None:
        if key in self._added:
            del self._added[key]
        elif key in self._base and key not in self._removed:
            self._removed.add(key)
        else:
            raise KeyError(key)
        self._own.pop(key, None)
        self._partial.discard(key)

    def __iter__(self) -> Iterator[str]:
        if not self._changed():
            return iter(self._base)
        return self._iter_changed()

    def _iter_changed(self) -> Iterator[str]:
        removed = self._removed
        for key in self._base:
            if key not in removed:
                yield key
        yield from list(self._added)

    def __len__(self) -> int:
        return len(self._base) - len(self._removed) + len(self._added)

    def __contains__(self, key: object) -> bool:
        if key in self._base:
            return key not in self._removed or key in self._added
        return key in self._added

    def __repr__(self) -> str:
        return f"CowRecords({len(self)} records, {len(self._own)} private)"

    def materialize(self) -> dict[str, Any]:
        own = self._own
        return {key: own[key] if key in own else self._base[key] for key in self}


def edit(records: Any, key: str, *path: Any, shallow: bool = False) -> Any:
    """`records[key]`, then down `path`, to change: with a copy-on-write collection only that part
    (and the levels above it) is copied (see `CowRecords.edit`)."""
    if type(records) is CowRecords:  # (not isinstance: a MutableMapping's check runs Python code)
        return records._edit(key, path, shallow)
    node = records[key]
    for step in path:
        node = _child(node, step)
    return node


def look(records: Any, key: str) -> Any:
    """`records[key]` for looking only: a write's lookup of a record it does not change shares the
    pristine record instead of copying it (a plain dict just answers `records[key]`)."""
    if type(records) is CowRecords:
        return records.look(key)
    return records[key]


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


class reading:
    """While a read tool runs, hand out shared pristine records instead of private copies."""

    __slots__ = ("_collections",)

    def __init__(self, model: Any) -> None:
        self._collections = [v for v in getattr(model, "__dict__", {}).values() if type(v) is CowRecords]

    def __enter__(self) -> None:
        for c in self._collections:
            c._reading = True

    def __exit__(self, *exc: object) -> None:
        for c in self._collections:
            c._reading = False


_INDEXES: dict[tuple[int, str], dict[Any, str]] = {}


def first_match_index(records: Any, name: str, key_of: Any) -> dict[Any, str] | None:
    """`{key_of(record): key of the first such record}` over a collection's shared records, built
    once per process, for a lookup that would otherwise scan them all (a user by email); None when
    it cannot answer for this collection (a plain dict, or a session that changed, added or removed
    any of its records: scan then)."""
    if type(records) is not CowRecords or records._own or records._changed():
        return None
    base = records._base
    index = _INDEXES.get((id(base), name))
    if index is None:
        index = {}
        for key, record in base.items():
            index.setdefault(key_of(record), key)
        _INDEXES[(id(base), name)] = index
    return index


_KEY_SUMMARIES: dict[tuple[int, str], Any] = {}


def shared_keys_summary(records: Any, name: str, summarise: Any) -> tuple[Any, list[str]] | None:
    """`(summarise(keys of the shared pristine records), keys the session added)`, the summary
    computed once per process and collection, for a figure over every key (the highest id, for the
    next one) that would otherwise scan them all on each write; None when it cannot answer (a plain
    dict, or a session that removed a pristine key: scan then). The summary is of the domain's
    shared data, the same for every session."""
    if type(records) is not CowRecords or records._removed:
        return None
    base = records._base
    key = (id(base), name)
    if key not in _KEY_SUMMARIES:
        _KEY_SUMMARIES[key] = summarise(base.keys())
    return _KEY_SUMMARIES[key], list(records._added)
