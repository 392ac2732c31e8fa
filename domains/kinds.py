"""A domain's tool kinds without building it, for `ledger-tui report`.

A report takes only the kind of each tool from a domain (to classify a failed run, to check the
tool-kinds digest recorded with it, to tell the tasks that write); building one imports its schema,
tools, paths and predicates, a tenth of a cold report. So each shipped domain keeps a table of its
kinds, `tool_kinds.json` in its folder, written from the built domain with the digest of the
files that declare its tools (its `__init__.py` and the module of each tool's function). The table
is used only while those files are the bytes it was written from: an edited tool, a new one, a
module moved, and the domain is built instead, as it is for a domain that has no table (one another
package registers). tests/domains/test_tool_kinds.py keeps every shipped table equal to its built domain.

Write the tables again after changing a domain's tools: `python -m ledger_tui.domains.kinds`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import ledger_tui
from ledger_tui.engine.domain import Domain, ToolKind, ToolKinds

HERE = Path(__file__).parent
PACKAGE = "ledger_tui"
ROOT = Path(ledger_tui.__file__).parent  # where the package's modules are (domains/ installs inside it)
TABLE = "tool_kinds.json"


def _file(module: str, here: Path) -> Path:
    """The source of a module of this package, found without importing it (importing a domain's
    module runs its package's `__init__`, the build this table spares)."""
    domains = f"{PACKAGE}.domains."
    if module.startswith(domains):
        parts = module[len(domains) :].split(".")
        base = here
    elif module.startswith(f"{PACKAGE}."):
        parts = module[len(PACKAGE) + 1 :].split(".")
        base = ROOT
    else:
        raise ValueError(f"{module} is not a module of {PACKAGE}")
    folder = base.joinpath(*parts)
    return folder / "__init__.py" if folder.is_dir() else folder.with_suffix(".py")


def _digest(modules: list[str], here: Path) -> str | None:
    """The digest of the modules' sources, or None if one is not there."""
    h = hashlib.blake2b(digest_size=16)
    for module in modules:
        try:
            data = _file(module, here).read_bytes()
        except (OSError, ValueError):
            return None
        h.update(module.encode("utf-8") + b"\0" + data + b"\0")
    return h.hexdigest()


def table(domain: Domain, here: Path = HERE) -> dict[str, Any]:
    """What `tool_kinds.json` holds for a built shipped domain."""
    modules = {f"{PACKAGE}.domains.{domain.name}"}
    for t in [*domain.tools, *domain.user_tools]:
        module = getattr(t.run, "__module__", None)
        if not isinstance(module, str) or not module.startswith(f"{PACKAGE}."):
            raise ValueError(f"tool {t.name} of {domain.name} runs a function from outside {PACKAGE}: its kinds cannot be tabled")
        modules.add(module)
    declared = sorted(modules)
    return {
        "modules": declared,
        "sources": _digest(declared, here),
        "tools": [[t.name, t.kind] for t in domain.tools],
        "user_tools": [[t.name, t.kind] for t in domain.user_tools],
    }


def declared(name: str, here: Path = HERE) -> ToolKinds | None:
    """A shipped domain's kinds from its table, or None when it has none or the files that declare
    its tools are no longer those the table was written from."""
    folder = here / name
    try:
        data = json.loads((folder / TABLE).read_bytes())
        modules = [str(m) for m in data["modules"]]
        if _digest(modules, here) != data["sources"]:
            return None
        tools = tuple(ToolKind(str(n), str(k)) for n, k in data["tools"])
        user_tools = tuple(ToolKind(str(n), str(k)) for n, k in data["user_tools"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return ToolKinds(name, folder, tools, user_tools)


def tool_kinds(name: str) -> ToolKinds:
    """A domain's tool kinds: a shipped domain's from its table while it is current, else from the
    built domain (raising as `load_domain` does)."""
    from ledger_tui.domains import load_domain, shipped

    if name in shipped():
        found = declared(name)
        if found is not None:
            return found
    return ToolKinds.of(load_domain(name))


def write(name: str, here: Path = HERE) -> Path:
    """Write a shipped domain's table from the domain built."""
    from ledger_tui.domains import load_domain

    path = here / name / TABLE
    data = table(load_domain(name), here)

    def pairs(key: str) -> str:
        return "[" + ",".join(f"\n  {json.dumps(p)}" for p in data[key]) + ("\n ]" if data[key] else "]")

    text = f'{{\n "modules": {json.dumps(data["modules"])},\n "sources": {json.dumps(data["sources"])},\n'
    text += f' "tools": {pairs("tools")},\n "user_tools": {pairs("user_tools")}\n}}\n'
    path.write_text(text, encoding="utf-8")
    return path


if __name__ == "__main__":
    from ledger_tui.domains import shipped

    for shipped_name in shipped():
        print(write(shipped_name))
