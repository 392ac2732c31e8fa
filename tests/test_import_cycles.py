"""No import circle in the code: every module's imports are read statically (`ast`: at the top and
inside functions alike, leaving out `if TYPE_CHECKING:` blocks, which never run), and the graph of
`ledger_tui/` and `domains/` (installed as `ledger_tui.domains`) has no cycle. A cycle means two
modules that cannot be understood, or loaded, one before the other."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[0] == "domains":
        parts = ["ledger_tui", "domains", *parts[1:]]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, name: str, known: set[str]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    unused = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for stmt in node.body
        for n in ast.walk(stmt)
    }
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]

    def nearest(dotted: str) -> str | None:
        while dotted and dotted not in known:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in unused:
            continue
        if isinstance(node, ast.Import):
            found.update(m for a in node.names if (m := nearest(a.name)))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            for a in node.names:
                target = f"{base}.{a.name}" if f"{base}.{a.name}" in known else nearest(base)
                if target:
                    found.add(target)
    found.discard(name)
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_no_module_imports_one_that_imports_it_back():
    files = sorted([*(ROOT / "ledger_tui").rglob("*.py"), *(ROOT / "domains").rglob("*.py")])
    names = {module_name(p): p for p in files}
    graph = {name: imports_of(path, name, set(names)) for name, path in names.items()}
    assert len(graph) > 140 and "ledger_tui.eval.trial" in graph["ledger_tui.eval.backends.shards"]
    assert cycles(graph) == []


def test_the_check_finds_a_cycle_when_there_is_one():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
