"""Each shipped domain's table of tool kinds (`domains/<name>/tool_kinds.json`), which `report`
reads instead of building the domain: it is current and equal to the built domain, it is set
aside once a file that declares the tools changes, and a domain without one is built."""

from __future__ import annotations

import shutil

import pytest

import ledger_tui.domains as domains
from ledger_tui.domains.kinds import TABLE, declared, table, tool_kinds
from ledger_tui.engine.domain import ToolKinds
from ledger_tui.engine.errors import UnknownDomainError
from ledger_tui.eval.recorded import tools_digest
from tests.toy_domain import build_toy


@pytest.mark.parametrize("name", domains.shipped())
def test_every_shipped_table_is_current_and_equal_to_the_built_domain(name):
    built = domains.load_domain(name)
    kinds = declared(name)
    assert kinds is not None, f"{name}/{TABLE} is out of date: run `python -m ledger_tui.domains.kinds`"
    assert kinds == ToolKinds.of(built)
    assert tools_digest(kinds) == tools_digest(built)  # what eval records is what report checks
    assert tool_kinds(name) is not None and tool_kinds(name) == kinds
    for t in [*built.tools, *built.user_tools]:
        assert kinds.kind(t.name, t.requestor) == built.kind(t.name, t.requestor)
    assert kinds.kind("no_such_tool") == built.kind("no_such_tool") == "unknown"
    assert kinds.tasks_path == built.tasks_path


def test_a_table_is_set_aside_when_a_file_declaring_the_tools_changes(tmp_path):
    """A copy of telecom's folder: its table holds while the files are the same, and an edit of
    its customer's tools (device.py) or its __init__.py makes report build the domain instead."""
    shutil.copytree(domains.HERE / "telecom", tmp_path / "telecom", ignore=shutil.ignore_patterns("__pycache__"))
    copied, shipped = declared("telecom", tmp_path), declared("telecom")
    assert copied is not None and shipped is not None and copied.tools == shipped.tools and copied.user_tools == shipped.user_tools
    assert copied.folder == tmp_path / "telecom"
    for edited in ("device.py", "__init__.py"):
        source = tmp_path / "telecom" / edited
        original = source.read_bytes()
        source.write_bytes(original.replace(b'"write"', b'"read"', 1) if b'"write"' in original else original + b"\n# edited\n")
        assert declared("telecom", tmp_path) is None
        source.write_bytes(original)
        assert declared("telecom", tmp_path) is not None
    (tmp_path / "telecom" / TABLE).write_text("{not json", encoding="utf-8")
    assert declared("telecom", tmp_path) is None
    (tmp_path / "telecom" / TABLE).unlink()
    assert declared("telecom", tmp_path) is None


def test_a_table_lists_the_modules_of_the_tools_and_the_domain_package():
    assert table(domains.load_domain("telecom"))["modules"] == [
        "ledger_tui.domains.telecom",
        "ledger_tui.domains.telecom.device",
        "ledger_tui.domains.telecom.tools",
        "ledger_tui.engine.generic_tools",
    ]


def test_a_domain_without_a_table_is_built(monkeypatch):
    """A plugin's domain (here the toy, registered under a name no shipped domain has) has no
    table: its kinds are its built domain's; an unknown name fails as loading it does."""
    toy = build_toy()
    load = domains.load_domain
    monkeypatch.setattr(domains, "load_domain", lambda name: toy if name == toy.name else load(name))
    assert toy.name not in domains.shipped()
    kinds = tool_kinds(toy.name)
    assert kinds == ToolKinds.of(toy) and kinds.kind("renew_loan") == "write"
    with pytest.raises(UnknownDomainError):
        tool_kinds("no-such-domain")
