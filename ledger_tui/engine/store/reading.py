"""Reading files that other people and other tools wrote.

Trajectories, scripts, `--db` files, task files, τ²-bench results files and `results.jsonl` come
from anywhere: a folder given for a file, Latin-1 bytes, a file of several gigabytes, JSON nested
thousands of levels deep (Python's parser overflows its stack on it), or a valid document with one
field of the wrong type. Every reader meets all of these the same way: one sentence naming the
file, the line or the field, and what is wrong in words (never a validator's dump), raised as that
reader's own `LedgerTuiError`.

Limits every reader enforces (the README lists them under "Known limits"):

- `MAX_FILE_BYTES`: a file larger than 1 GB is refused before it is read.
- `MAX_LINE_BYTES`: a line of a JSON Lines file (trajectory, results.jsonl) longer than 16 MB.
- `MAX_DEPTH`: JSON nested more than 100 levels deep (the project's own files reach 10); a
  trajectory's line may nest `EVENT_DEPTH` (120): the values it records, from files and models held
  to 100, plus the event around them.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any, Iterator

from pydantic import ValidationError

from ledger_tui.engine.errors import LedgerTuiError
from ledger_tui.engine.outside import shown

MAX_FILE_BYTES = 1 << 30
MAX_LINE_BYTES = 16 << 20
MAX_DEPTH = 100
EVENT_DEPTH = MAX_DEPTH + 20
_BINARY = getattr(os, "O_BINARY", 0)  # Windows: no newline translation


def read_text(
    path: Path | str, error: type[LedgerTuiError], fix: str, *, missing: str | None = None, limit: int | None = None
) -> str:
    """The text of `path` (UTF-8, a byte-order mark dropped), or `error` with one sentence:
    missing (`missing`, else "<path> does not exist; <fix>."), a folder, unreadable, over `limit`
    bytes (default `MAX_FILE_BYTES`), or not UTF-8 (with the line of the first bad byte). Pipes
    (`<(…)`) are read too."""
    path = Path(path)
    return decoded(path, read_bytes(path, error, fix, missing=missing, limit=limit), error, fix)


def read_bytes(
    path: Path | str, error: type[LedgerTuiError], fix: str, *, missing: str | None = None, limit: int | None = None
) -> bytes:
    """The bytes of `path`, or `error` with `read_text`'s sentences (all but "not UTF-8": see
    `decoded`)."""
    limit = MAX_FILE_BYTES if limit is None else limit
    try:
        fd = os.open(path, os.O_RDONLY | _BINARY)
    except (OSError, ValueError):
        return _unopened(Path(path), error, fix, missing, limit)
    # read through the descriptor, without the buffered file object Python would wrap it in (a
    # report of 1,000 runs reads most of their trajectories)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise error(_a_folder(path, fix))
        if not stat.S_ISREG(info.st_mode):  # a pipe: read on up to the limit
            data = _up_to(fd, limit + 1)
        elif info.st_size > limit:
            raise error(_too_large(path, limit, fix))
        else:
            # a file's own size, not the limit: asked for `limit + 1` bytes, a read allocates that
            # much first (1 GB); a file that grew since is read on up to the limit
            data = _up_to(fd, info.st_size + 1, at_once=info.st_size + 1)
            if len(data) > info.st_size:
                data += _up_to(fd, limit + 1 - len(data))
    except OSError as exc:
        raise error(_unreadable(path, exc, fix)) from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise error(_too_large(path, limit, fix))
    return data


# read_bytes's sentences, one place for both of its ways (a file opened, one that would not open)
def _a_folder(path: Path | str, fix: str) -> str:
    return f"{Path(path)} is a folder, not a file; {fix}."


def _too_large(path: Path | str, limit: int, fix: str) -> str:
    return f"{Path(path)} is larger than {_size(limit)}, the most ledger-tui reads; {fix}."


def _unreadable(path: Path | str, exc: OSError, fix: str) -> str:
    if isinstance(exc, PermissionError):
        return f"{Path(path)} cannot be read (permission denied); check its permissions."
    return f"{Path(path)} cannot be read ({exc.strerror or type(exc).__name__}); {fix}."


def _up_to(fd: int, size: int, at_once: int = 1 << 24) -> bytes:
    """Up to `size` bytes from `fd`, fewer only at its end; at most `at_once` asked for at a time
    (16 MB: a read allocates what it asks for first). A file of known size is asked for whole: read
    in parts, its bytes would be copied once more to join them (0.05 s and the file's size again at
    69 MB)."""
    parts = []
    while size > 0:
        part = os.read(fd, min(size, at_once))
        if not part:
            break
        parts.append(part)
        size -= len(part)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _unopened(path: Path, error: type[LedgerTuiError], fix: str, missing: str | None, limit: int) -> bytes:
    """`read_bytes` of a file that would not open: looked at again, through its stat and Python's
    file object, whose errors say why (missing, a folder, too large, permission denied)."""
    try:
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):
            raise error(_a_folder(path, fix))
        if stat.S_ISREG(info.st_mode) and info.st_size > limit:
            raise error(_too_large(path, limit, fix))
        with path.open("rb") as fh:
            data = fh.read(min(info.st_size, limit) + 1) if stat.S_ISREG(info.st_mode) else b""
            if len(data) > info.st_size or not stat.S_ISREG(info.st_mode):
                data += fh.read(limit + 1 - len(data))
    except FileNotFoundError:
        raise error(missing or f"{path} does not exist; {fix}.") from None
    except IsADirectoryError:
        raise error(_a_folder(path, fix)) from None
    except OSError as exc:
        raise error(_unreadable(path, exc, fix)) from None
    if len(data) > limit:
        raise error(_too_large(path, limit, fix))
    return data


def decoded(
    path: Path | str, data: bytes, error: type[LedgerTuiError], fix: str, *, first_line: int = 1, first_byte: int = 0
) -> str:
    """`data`, read from `path`, as UTF-8 text (a byte-order mark at the file's start dropped), or
    `error`: "<path> is not UTF-8 text (line L, byte B: 0xNN); <fix>.". `data` may be the end of
    the file, from its line `first_line`, byte `first_byte` on (the lines before it read already)."""
    try:
        return data.decode("utf-8-sig" if first_byte == 0 else "utf-8")
    except UnicodeDecodeError as exc:
        line = first_line + data.count(b"\n", 0, exc.start)
        raise error(
            f"{path} is not UTF-8 text (line {line}, byte {first_byte + exc.start}: {data[exc.start]:#04x}); {fix}."
        ) from None


def _size(limit: int) -> str:
    return f"{limit >> 30} GB" if limit >= 1 << 30 else f"{limit >> 20} MB"


def parse_json(text: str, error: type[LedgerTuiError], name: str, fix: str) -> Any:
    """`text` as JSON, or `error`: "<name> is not valid JSON (line L, column C: what); <fix>." or
    "<name> is nested more than 100 levels deep (line L); <fix>." (the parser's own overflow, on
    thousands of levels, caught and told the same way)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{name} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); {fix}.") from None
    except RecursionError:  # Python's parser recurses: thousands of levels overflow its stack
        value = None
        deep = True
    else:
        deep = deeper_than(value, MAX_DEPTH)
    if deep:
        line = too_deep(text)
        where = f" (line {line})" if line is not None else ""
        raise error(f"{name} is nested more than {MAX_DEPTH} levels deep{where}; {fix}.")
    return value


def deeper_than(value: Any, limit: int) -> bool:
    """Whether a parsed JSON value nests more than `limit` levels (walked without recursion)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def load_json(path: Path | str, error: type[LedgerTuiError], fix: str, *, missing: str | None = None, limit: int | None = None) -> Any:
    """`read_text` then `parse_json`, the file named by its path."""
    return parse_json(read_text(path, error, fix, missing=missing, limit=limit), error, str(path), fix)


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_INNERMOST = re.compile(r"\[\]|\{\}")
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


def too_deep(text: str, limit: int = MAX_DEPTH) -> int | None:
    """The line at which JSON `text` is nested more than `limit` levels deep, or None. Fast on
    ordinary text: brackets inside strings are dropped and the innermost pairs removed `limit`
    times, all in C; only a text that fails is walked token by token to find the line."""
    if text.count("[") + text.count("{") <= limit:
        return None
    skeleton = _NOT_BRACKET.sub("", _STRING.sub("", text))
    for _ in range(limit):
        skeleton, removed = _INNERMOST.subn("", skeleton)
        if not skeleton:
            return None  # balanced, and no deeper than the limit
        if not removed:
            break  # unbalanced (a file cut short): walk it
    depth = 0
    for token in _TOKEN.finditer(text):
        ch = token.group()
        if ch in "[{":
            depth += 1
            if depth > limit:
                return text.count("\n", 0, token.start()) + 1
        elif ch in "]}":
            depth -= 1
    return None


def json_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) for the non-blank lines of a JSON Lines text, split at newlines only:
    a \\x85, \\x1c or U+2028, which JSON leaves raw inside a string, is not a line break."""
    for number, line in enumerate(text.split("\n"), 1):
        if line.strip():
            yield number, line


def line_problem(line: str, depth: int | None = None) -> str | None:
    """What makes one JSON Lines line unreadable before it is parsed: longer than MAX_LINE_BYTES,
    or nested deeper than `depth` (default MAX_DEPTH)."""
    if len(line) > MAX_LINE_BYTES // 4 and len(line.encode("utf-8", "surrogatepass")) > MAX_LINE_BYTES:
        return f"the line is longer than {_size(MAX_LINE_BYTES)}"
    depth = MAX_DEPTH if depth is None else depth
    if too_deep(line, depth) is not None:
        return f"it is nested more than {depth} levels deep"
    return None


# ----------------------------------------------------------------------------- validation errors in words

_WORDS = {
    "missing": "is missing",
    "string_type": "should be text",
    "string_unicode": "should be text",
    "int_type": "should be a whole number",
    "int_parsing": "should be a whole number",
    "int_from_float": "should be a whole number",
    "float_type": "should be a number",
    "float_parsing": "should be a number",
    "finite_number": "should be a finite number",
    "bool_type": "should be true or false",
    "bool_parsing": "should be true or false",
    "dict_type": "should be an object",
    "model_type": "should be an object",
    "model_attributes_type": "should be an object",
    "dataclass_type": "should be an object",
    "list_type": "should be a list",
    "tuple_type": "should be a list",
    "none_required": "should be null",
    "extra_forbidden": "is not a field this file may have",
}
# parts of a validator's location that name its own machinery, not a field of the file
_INTERNAL = {"str", "int", "float", "bool", "none", "list", "dict", "any", "tuple"}


def _one_line(text: str) -> str:
    """Text from a file as it may sit in a one-line message: controls, newlines and tabs written out."""
    return shown(text).replace("\n", "\\n").replace("\t", "\\t")


def brief(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)[:24]
    if isinstance(value, str):
        return _one_line(repr(value[:30] + ("…" if len(value) > 30 else "")))
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _where(loc: tuple[Any, ...], root: str) -> str:
    out = root
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
            continue
        text = _one_line(str(part))
        if "[" in text or text in _INTERNAL or text.startswith(("function-", "json-or-python", "lax-or-strict")):
            continue
        text = text if len(text) <= 40 else text[:39] + "…"
        out += f".{text}" if out else text
    return out


def _what(error: dict[str, Any]) -> str:
    kind = error.get("type", "")
    msg = str(error.get("msg", ""))
    if kind == "json_invalid":
        if "recursion limit" in msg:
            return f"it is nested more than {MAX_DEPTH} levels deep"
        return "it is not valid JSON: " + msg.removeprefix("Invalid JSON: ")[:120]
    if kind == "union_tag_invalid":
        ctx = error.get("ctx") or {}
        return f"has an unknown {str(ctx.get('discriminator', 'kind')).strip(chr(39))} {brief(ctx.get('tag'))}"
    if kind == "union_tag_not_found":
        ctx = error.get("ctx") or {}
        return f"has no {str(ctx.get('discriminator', 'kind')).strip(chr(39))}"
    if kind in _WORDS:
        what = _WORDS[kind]
        return what if kind in ("missing", "extra_forbidden") else f"{what} (got {brief(error.get('input'))})"
    what = msg.removeprefix("Input ").removeprefix("Value error, ").removeprefix("Assertion failed, ")
    return what.rstrip(".")[:160]


def words(exc: ValidationError, root: str = "") -> str:
    """What a validation error says, in words: `<field> <what is wrong>` for the first problem
    (the alternatives of a field that may take several types joined by "or"), and how many more
    there are. `root` is prefixed to the field (e.g. "simulations[3]")."""
    errors = exc.errors()
    if not errors:
        return "it does not have the expected shape"
    first = _where(tuple(errors[0].get("loc", ())), root)
    same = [e for e in errors if _where(tuple(e.get("loc", ())), root) == first]
    whats: list[str] = []
    for e in same:
        what = _what(e)
        if what not in whats:
            whats.append(what)
    if len(whats) > 1 and all(w.startswith("should be") for w in whats):
        what = "should be " + " or ".join(w.removeprefix("should be ").split(" (got")[0] for w in whats)
        what += f" (got {brief(same[0].get('input'))})"
    else:
        what = whats[0]
    others = len({_where(tuple(e.get("loc", ())), root) for e in errors}) - 1
    more = f" (and {others} more problem{'s' if others > 1 else ''})" if others else ""
    return f"{first} {what}{more}" if first else f"{what}{more}"
