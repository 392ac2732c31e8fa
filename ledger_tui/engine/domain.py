"""The domain contract: what a folder under `domains/` declares so the engine can run it.

A domain is declarative where it can be: a table of tools (name, kind, argument model, effect, path
map or touched paths), a list of predicates each naming its clause and the paths it reads, the
statements the gate may take from what the customer said, a clock, a policy text and tasks.
Reading one domain folder shows its whole policy surface.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Literal, Sequence

from pydantic import BaseModel, ValidationError

from ledger_tui.engine.errors import DatabaseError
from ledger_tui.engine.store.reading import parse_json, read_text, words
from ledger_tui.engine.store.serialize import digest
from ledger_tui.engine.conversation.speaker import any_given_for_another
from ledger_tui.engine.conversation.text import names
from ledger_tui.engine.conversation.stated import Statement, keyword_statement  # noqa: F401  (domains import them from here)
from ledger_tui.engine.conversation.questions import Choice, Question, said_as  # noqa: F401  (domains import them from here)
from ledger_tui.engine.policy_text import clause_text  # noqa: F401  (the domains' tests import it from here)

if TYPE_CHECKING:
    from ledger_tui.engine.disclosure import ReadGate
    from ledger_tui.engine.events import SuggestedCall
    from ledger_tui.engine.gate import Predicate

ToolKind = Literal["read", "write", "generic"]
PathMap = Callable[[dict[str, Any], Any], Iterable[tuple[str, Any]]]
# path templates over the arguments, or a function of the arguments and the write's result (plain
# JSON): the result names what the arguments do not (the owner of an order, an appointment's provider)
Touches = tuple[str, ...] | Callable[[dict[str, Any], Any], Iterable[str]]


class ToolError(Exception):
    """A tool refused the call; the model reads `Error: <message>`."""


class MistypedArgument(ToolError):
    """A write argument of the wrong JSON type that the tool will not store, found by the tool
    itself (after the checks τ²-bench makes first); the environment words it as it words every
    argument that does not validate."""

    def __init__(self, argument: str, expected: str) -> None:
        super().__init__(f"{argument}: Input should be {expected}")


@dataclass(frozen=True)
class Tool:
    """One tool, as the model sees it and as the environment runs it.

    `run(db, args)` gets the validated argument model and returns the raw result (a record, list,
    dict or text), or raises `ToolError`. For reads, `absorbs(arguments, result)` yields the
    `(path, value)` pairs the ledger records (values are plain JSON). For writes, `touches` lists
    the path templates (over the arguments: `reservations.{reservation_id}`; `prefix.*` for a whole
    subtree) that a successful call makes stale, or is `touches(arguments, result)` when the
    result says which records changed. `identifies` returns the customer id a successful
    read authenticates, if it is an identification tool.
    """

    name: str
    kind: ToolKind
    args: type[BaseModel]
    run: Callable[[Any, Any], Any]
    description: str
    absorbs: PathMap | None = None
    touches: Touches = ()
    identifies: Callable[[dict[str, Any], Any], str | None] | None = None
    # What the customer must have said for `identifies` to count (default: every string argument):
    # a lookup of someone the customer did not name identifies nobody.
    said: Callable[[dict[str, Any], Any], Iterable[Any]] | None = None
    requestor: Literal["assistant", "user"] = "assistant"
    # Arguments that may run as given when their JSON type is wrong, as τ²-bench's tools (plain
    # Python, no validation) run them: a lookup by a mistyped id just finds nothing. None: every
    # argument of a read, the ids (`id`, `*_id`, `*_ids`) of a write. A write never stores a value
    # of the wrong type: any other mistyped argument refuses the call.
    raw_args: frozenset[str] | None = None

    def runs_raw(self, argument: str) -> bool:
        if self.raw_args is not None:
            return argument in self.raw_args
        if self.kind != "write":
            return True
        return argument == "id" or argument.endswith(("_id", "_ids"))

    def identified_by(self, arguments: dict[str, Any], value: Any, customer_text: Sequence[str]) -> str | None:
        """The customer this successful read identifies, if the customer said what it looked up."""
        if self.identifies is None:
            return None
        user_id = self.identifies(arguments, value)
        if not user_id:
            return None
        wanted = list(self.said(arguments, value)) if self.said else [v for v in arguments.values() if isinstance(v, str) and v]
        if not wanted or not all(any(names(text, v) for text in customer_text) for v in wanted):
            return None
        if any_given_for_another(customer_text, wanted) is not None:
            return None  # the caller gave another person's identifier: that identifies nobody (speaker.py)
        return str(user_id)

    def touched_paths(self, arguments: dict[str, Any], result: Any = None) -> list[str]:
        """The paths a successful call made stale; `result` is its return as plain JSON (None when
        unknown: a callable must then fall back to whole subtrees)."""
        if callable(self.touches):
            return list(self.touches(arguments, result))
        out = []
        for template in self.touches:
            try:
                out.append(template.format(**{k: v for k, v in arguments.items()}))
            except (KeyError, IndexError, ValueError):
                out.append(template.split("{", 1)[0].rstrip(".") + ".*")
        return out

    def schema(self) -> dict[str, Any]:
        """The OpenAI function-tool schema for this tool."""
        params = self.args.model_json_schema()
        params.pop("title", None)
        params.setdefault("properties", {})
        params.setdefault("type", "object")
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": params},
        }


@dataclass(frozen=True)
class ToolKind:
    name: str
    kind: str


@dataclass(frozen=True)
class ToolKinds:
    """What a report takes from a domain: each tool's kind on each side, in the domain's order, and
    where its tasks are. `ledger_tui.domains.kinds` gives a shipped domain's without building it."""

    name: str
    folder: Path
    tools: tuple[ToolKind, ...]
    user_tools: tuple[ToolKind, ...] = ()

    @classmethod
    def of(cls, domain: "Domain") -> "ToolKinds":
        return cls(
            domain.name,
            domain.folder,
            tuple(ToolKind(t.name, t.kind) for t in domain.tools),
            tuple(ToolKind(t.name, t.kind) for t in domain.user_tools),
        )

    def kind(self, name: str, requestor: str = "assistant") -> str:
        """As `Domain.kind`: the first tool of that name on that side, else "unknown"."""
        pool = self.user_tools if requestor == "user" else self.tools
        return next((t.kind for t in pool if t.name == name), "unknown")

    @property
    def tasks_path(self) -> Path:
        return self.folder / "tasks.json"


@dataclass
class Domain:
    name: str
    title: str
    folder: Path
    db_model: type[BaseModel]
    tools: list[Tool]
    predicates: list["Predicate"]
    clock: str
    statements: list[Statement] = field(default_factory=list)
    # what the system asks the customer in closed form in consent mode "card" (questions.py)
    questions: list[Question] = field(default_factory=list)
    user_tools: list[Tool] = field(default_factory=list)
    # The class names τ²-bench's Python errors name a tool by ("RetailTools.get_order_details()
    # missing 1 required positional argument: 'order_id'"), for the agent's and the phone's tools.
    toolkit: str = "Tools"
    user_toolkit: str = "UserTools"
    # Hooks for domains that need more than one pydantic db in one JSON file (telecom).
    load_db_hook: Callable[[Path | None], Any] | None = None
    # The files such a loader reads for a `--db` path (None: the shipped database); see `db_files`.
    db_files_hook: Callable[[Path | None], list[Path]] | None = None
    digests_hook: Callable[[Any], tuple[str, str | None]] | None = None
    sync: Callable[[Any], None] | None = None
    # Apply a task's `initial_state` (initialization_data / initialization_actions) to a fresh db.
    init_task: Callable[[Any, Any], None] | None = None
    # Is one τ²-bench env assertion ({"func_name", "arguments", "assert_value", ...}) met on the db?
    check_assertion: Callable[[Any, dict[str, Any]], bool] | None = None
    # The read call that would identify the customer, from the write's arguments and what the
    # customer said (for hints and the gold agent); None when the customer must be asked first.
    identify_hint: Callable[[dict[str, Any], Sequence[str]], "SuggestedCall | None"] | None = None
    # (path pattern, read tool) pairs: which read supplies a path, e.g.
    # ("reservations.{reservation_id}", "get_reservation_details"). Used for REVISE hints.
    sources: list[tuple[str, str]] = field(default_factory=list)
    # What a proposal of a write must name (`consent.Terms`), as the confirmation predicate reads
    # it; the gold agent proposes from it too.
    proposal_terms: Callable[[Any], Any] | None = None
    # What a confirmation card shows of a write besides its action (`cards.py`): each argument in
    # the customer's terms ("Refund: $54.20 to your gift card"), from a GateContext of the call.
    # None: the card lists the arguments as they are.
    card_details: Callable[[Any], list[str]] | None = None
    # What the customer who owns the record a call acts on would say to be identified under this
    # policy ("My user id is …"), from the database: the gold customer's words.
    identity_sentence: Callable[[Any, dict[str, Any]], str | None] | None = None
    # Set when running on someone else's data (e.g. a τ²-bench data folder): the policy text the
    # model reads and the database loaded by default.
    policy_override: str | None = None
    db_override: Path | None = None
    # (collection, id field) pairs: maps whose keys must equal their records' ids, e.g.
    # ("reservations", "reservation_id") or ("users.*.payment_methods", "id"); see `check_keys`.
    keyed: tuple[tuple[str, str], ...] = ()
    # The read gate (disclosure.py): whose records the ledger's paths hold, so that in gated modes
    # a read showing another customer's is withheld from the model. None: no read is withheld.
    read_gate: "ReadGate | None" = None
    # Clauses of policy.md that no predicate enforces, each with why the gate cannot (the model
    # reads the policy, not this): `ledger-tui check-domain` accepts a clause only if a predicate
    # or the read gate names it, or it is listed here.
    not_gated: Mapping[str, str] = field(default_factory=dict)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    # ------------------------------------------------------------------ lookups
    def tool(self, name: str, requestor: str = "assistant") -> Tool | None:
        pool = self.user_tools if requestor == "user" else self.tools
        for t in pool:
            if t.name == name:
                return t
        return None

    def kind(self, name: str, requestor: str = "assistant") -> str:
        t = self.tool(name, requestor)
        return t.kind if t else "unknown"

    def tool_schemas(self, requestor: str = "assistant") -> list[dict[str, Any]]:
        """The agent's (or with "user", the customer's) tool schemas, built once: pydantic schema
        generation costs milliseconds, and every model call sends them."""
        key = f"__tool_schemas__:{requestor}"
        cached = self._cache.get(key)
        if cached is None:
            pool = self.user_tools if requestor == "user" else self.tools
            cached = self._cache[key] = [t.schema() for t in pool]
        return cached

    @property
    def policy_path(self) -> Path:
        return self.folder / "policy.md"

    @property
    def policy(self) -> str:
        """The policy text; read again only when the file changes (every session reads it)."""
        if self.policy_override is not None:
            return self.policy_override
        path = self.policy_path
        stamp = path.stat().st_mtime_ns
        cached = self._cache.get("__policy__")
        if cached is None or cached[0] != stamp:
            cached = self._cache["__policy__"] = (stamp, path.read_text(encoding="utf-8"))
        return cached[1]

    @property
    def tasks_path(self) -> Path:
        return self.folder / "tasks.json"

    @property
    def db_path(self) -> Path:
        return self.folder / "db.json"

    # ------------------------------------------------------------------ database
    def load_db(self, path: Path | None = None) -> Any:
        """A fresh, private copy of the domain database (the shipped one, or `path`)."""
        path = path or self.db_override
        if self.load_db_hook is not None:
            return check_keys(self.load_db_hook(path), self.keyed, path or self.db_path)
        source, key = self._source(path)
        raw = self._cache.get(key)
        if raw is None:
            fix = "pass a τ²-bench-format db.json"
            raw = parse_json(read_text(source, DatabaseError, fix), DatabaseError, f"Database file {source}", fix)
            self._cache[key] = raw
        try:
            with _no_gc():
                db = self.db_model.model_validate(raw)
        except ValidationError as exc:
            raise DatabaseError(
                f"Database file {source} does not match the {self.name} schema: {words(exc)}; pass a τ²-bench-format db.json."
            ) from None
        return check_keys(db, self.keyed, source)

    def db_files(self, path: Path | None = None) -> list[Path]:
        """The files the database comes from (the shipped one, or `path`), the one `load_db` is
        given first: what eval hands to workers that cannot read this machine's files."""
        path = path or self.db_override
        if self.db_files_hook is not None:
            return self.db_files_hook(path)
        return [Path(path) if path else self.db_path]

    def _source(self, path: Path | None) -> tuple[Path, str]:
        """The database file and a cache key that changes when the file does."""
        source = Path(path) if path else self.db_path
        try:
            return source, f"{source.resolve()}:{source.stat().st_mtime_ns}"
        except FileNotFoundError:
            raise DatabaseError(f"Database file {source} does not exist; check --db.") from None

    def session_db(self, path: Path | None = None) -> Any:
        """A private database for one session, cheap to make: copy-on-write over a pristine copy
        validated once per process (domains with their own loader get `load_db`)."""
        if self.load_db_hook is not None:
            return self.load_db(path)
        from ledger_tui.engine.store.cow import cow_copy, record_fields

        source, key = self._source(path or self.db_override)
        entry = self._cache.get("pristine:" + key)
        if entry is None:
            pristine = self.load_db(source)
            entry = self._cache["pristine:" + key] = (pristine, {}, record_fields(pristine))
        pristine, texts, shared = entry
        return cow_copy(pristine, texts, shared)

    def digests(self, db: Any) -> tuple[str, str | None]:
        """(agent db digest, user db digest or None), computed as τ²-bench does."""
        with _no_gc():
            if self.digests_hook is not None:
                return self.digests_hook(db)
            return digest(db), None


def check_keys(db: Any, keyed: Iterable[tuple[str, str]], source: Path | str) -> Any:
    """`db`, once every keyed collection's keys equal their records' ids; else a DatabaseError.

    A collection is a dotted path of field names, `*` standing for every record of a map or list
    on the way (`users.*.payment_methods`). Tools look records up by key and the ledger files
    them by the id inside, so a key that names another record would act on one and show another."""
    for pattern, id_field in keyed:
        found: list[tuple[str, Any]] = [("", db)]
        for part in pattern.split("."):
            step: list[tuple[str, Any]] = []
            for where, value in found:
                if part != "*":
                    step.append((f"{where}.{part}" if where else part, _field(value, part)))
                elif isinstance(value, Mapping):
                    step.extend((f"{where}.{k}", v) for k, v in value.items())
                elif isinstance(value, list):
                    step.extend((f"{where}.{i}", v) for i, v in enumerate(value))
            found = step
        for where, collection in found:
            for key, record in collection.items() if isinstance(collection, Mapping) else ():
                own = _field(record, id_field)
                if own != key:
                    raise DatabaseError(
                        f"Database {source}: {where} key {key!r} holds the record whose {id_field} is "
                        f"{own!r}; make each key equal its record's id."
                    )
    return db


def _field(value: Any, name: str) -> Any:
    return value.get(name) if isinstance(value, Mapping) else getattr(value, name, None)


class _no_gc:
    """Pause the cyclic garbage collector while building a large acyclic object tree.

    Validating a full-size database allocates hundreds of thousands of objects; with several
    sessions alive, the collections this triggers rescan every other session's database and make
    a load several times slower. Nothing built here forms cycles, so pausing is safe."""

    def __enter__(self) -> None:
        import gc

        self._was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        import gc

        if self._was_enabled:
            gc.enable()
