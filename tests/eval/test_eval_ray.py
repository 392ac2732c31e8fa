"""eval --backend ray on a local Ray instance: the same results.jsonl and trajectories as the local
backend, runs streamed back to the one writer as they finish, resume, and every failure a user can
meet in one sentence. Ray is part of the dev install: a missing Ray fails this module, it is not
skipped. One Ray instance (2 CPUs) a test process serves the in-process tests (`local_ray`,
tests/eval/conftest.py) and the CLI tests that join a cluster by its address (`ray_head`); the
Ctrl-C test lets `ledger-tui eval --backend ray` start its own, as it does without an address (the
suite's one run of that path), and the token test starts a cluster with token authentication.
The Ray workers a test counts are its own run's (`actor_pids`), so runs side by side do not meet."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import ray

from benchmarks.eval import responder_for
from ledger_tui.domains import load_domain
from ledger_tui.engine.errors import LedgerTuiError
from ledger_tui.engine.agents.gold import fresh_environment
from ledger_tui.engine.agents.tasks import load_tasks
from ledger_tui.eval.backends.ray_actor import ShippedDomain
from ledger_tui.eval.backends.ray_cluster import INSTALL, Cluster, RayError, check_backend
from ledger_tui.eval.results import load_results
from ledger_tui.eval.runner import run_eval
from ledger_tui.eval.trial import EvalConfig
from ledger_tui.eval.backends.processes import Tau2DomainSource
from tests.cli.test_cli import ROOT, one_sentence_error
from tests.cli.test_eval_workers_cli import RUNS as CLI_RUNS
from tests.cli.test_eval_workers_cli import held, in_flight, interrupt_once, start, wait_for_lines  # noqa: F401  (held: a fixture)
from tests.conftest import RUN_MARK
from tests.eval.test_eval_workers import RUNS, config, interrupt_then_resume, steady, without_timing
from tests.loopback import LoopbackServer
from tests.toy_domain import build_toy


def on_ray(cfg: EvalConfig) -> EvalConfig:
    cfg.backend = "ray"
    return cfg


def actor_homes() -> set[str]:
    """The temporary folders of Ray workers on this machine, but those of the live workers of other
    runs (another test process, another checkout's suite): theirs come and go as they please."""
    others = {str(pid) for pid in set(actor_pids(mine=False)) - set(actor_pids())}
    return {p.name for p in Path(tempfile.gettempdir()).glob("ledger-tui-ray-*") if p.name.split("-")[3] not in others}


def actor_pids(mine: bool = True) -> list[int]:
    """The processes of Ray workers (ShardActor) this test process started, itself or through the
    commands it ran (their environment holds its RUN_MARK; `mine=False`: anyone's)."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "cmdline").read_bytes().startswith(b"ray::ShardActor"):
                if mine and RUN_MARK.encode() not in (entry / "environ").read_bytes().split(b"\0"):
                    continue
                pids.append(int(entry.name))
        except (OSError, ValueError):
            pass
    return pids


def actors_ended() -> list[int]:
    """The Ray workers still running a few seconds on (an actor's process exits shortly after
    Ray reports it killed): [] once they have all ended."""
    deadline = time.monotonic() + 10
    while actor_pids() and time.monotonic() < deadline:
        time.sleep(0.1)
    return actor_pids()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_ray_actors_write_what_the_local_backend_writes(local_ray, tmp_path):
    # the folder an actor killed earlier could not remove: the next actors on the machine do
    ended = subprocess.Popen(["true"])
    ended.wait()
    stale = Path(tempfile.gettempdir()) / f"ledger-tui-ray-{ended.pid}-left"
    (stale / "out").mkdir(parents=True)
    homes = actor_homes()
    with LoopbackServer(steady) as server:
        local = await run_eval(config(server, tmp_path / "local", workers=1))
        seen = []
        remote = await run_eval(on_ray(config(server, tmp_path / "ray", workers=2)), on_result=seen.append)
    assert len(local) == len(remote) == len(seen) == RUNS
    # the trajectories came back with the results and were written here, where a local run writes them
    assert without_timing(tmp_path / "local") == without_timing(tmp_path / "ray")
    assert {r.trajectory for r in remote} == {str(p) for p in (tmp_path / "ray" / "trajectories").rglob("*.jsonl")}
    # the actors are gone, and their folders with them
    assert actors_ended() == [] and actor_homes() <= homes - {stale.name}


@pytest.mark.parametrize("domain", ["airline", "telecom"])
async def test_gold_runs_of_a_shipped_domain_on_ray_equal_the_local_ones(local_ray, tmp_path, domain):
    # telecom's database is two files (the carrier's and the phone's): both travel to the actors
    source = Tau2DomainSource(domain)
    tasks = [t for t in load_tasks(load_domain(domain).tasks_path) if t.gold_actions][:2]

    def gold(out: Path, backend: str, workers: int) -> EvalConfig:
        return EvalConfig(
            domain=source(), tasks=tasks, modes=["baseline", "full"], trials=2, out=out, agent="gold",
            concurrency=2, workers=workers, domain_source=source, backend=backend,
        )

    local = await run_eval(gold(tmp_path / "local", "local", 1))
    remote = await run_eval(gold(tmp_path / "ray", "ray", 2))
    assert len(local) == len(remote) == 8 and all(r.passed for r in remote)
    assert without_timing(tmp_path / "local") == without_timing(tmp_path / "ray")


def test_the_domain_travels_as_data_not_as_a_path(tmp_path, monkeypatch):
    from ray import cloudpickle

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the rebuilt domain's files go (an actor's own folder)

    for domain in (build_toy(), load_domain("telecom")):
        expected_policy = domain.policy
        expected = fresh_environment(domain).digests()
        shipped = cloudpickle.dumps(ShippedDomain.of(domain))
        if domain.name == "toy":
            for path in domain.folder.iterdir():  # the files it came from are gone on the actor's machine
                path.unlink()
        rebuilt = cloudpickle.loads(shipped)()
        assert rebuilt.policy == expected_policy
        assert fresh_environment(rebuilt).digests() == expected
        assert not str(rebuilt.db_override).startswith(str(domain.folder))


async def test_an_interrupted_ray_eval_keeps_its_finished_runs_and_a_resume_does_only_the_rest(local_ray, tmp_path):
    await interrupt_then_resume(tmp_path, "ray", actors_ended)


async def test_the_number_of_ray_workers_defaults_to_the_cluster_and_more_than_it_has_is_one_sentence(local_ray, tmp_path):
    class Server:
        base_url = "http://127.0.0.1:9/v1"

    counts = {}
    for concurrency, workers, runs in ((4, None, 16), (64, None, 100), (64, None, 1), (4, 2, 16)):
        cluster = Cluster.join(on_ray(config(Server, tmp_path, workers=workers, concurrency=concurrency)), runs)
        counts[(concurrency, workers, runs)] = [lane.slots for lane in cluster.pool]
        await cluster.aclose()
    # one below 64 sessions, else one a CPU of the cluster (2 here), never more than the runs
    assert counts == {(4, None, 16): [4], (64, None, 100): [32, 32], (64, None, 1): [64], (4, 2, 16): [2, 2]}
    with pytest.raises(RayError) as caught:
        Cluster.join(on_ray(config(Server, tmp_path, workers=3, concurrency=4)), 16)
    words = str(caught.value)
    assert words == (
        "--workers 3 needs 3 CPUs of the Ray cluster, which has 2; lower --workers or add machines with "
        "`ray start --address=HEAD:6379`."
    )
    assert ray.is_initialized() and actors_ended() == []  # the actors started are ended; the instance is the caller's


async def test_a_run_that_raises_on_ray_stops_the_eval_with_the_sentence_one_process_says(local_ray, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    said = []
    with LoopbackServer(steady) as server:
        for backend in ("local", "ray"):
            out = tmp_path / backend
            out.mkdir()
            (out / "trajectories").symlink_to(elsewhere)  # outputs would land outside --out
            cfg = config(server, out, workers=1)
            cfg.backend = backend
            with pytest.raises(LedgerTuiError) as caught:
                await run_eval(cfg)
            said.append((type(caught.value), str(caught.value).replace(str(out), "OUT")))
    assert said[0][0] is said[1][0] and "would be written outside OUT" in said[1][1]
    assert list(elsewhere.iterdir()) == []  # nothing was written through the link


# ------------------------------------------------------------------------------- as a user meets it


def run_cli(*args: str, env: dict | None = None, python: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*(python or [sys.executable, "-m", "ledger_tui"]), *args], capture_output=True, text=True, cwd=ROOT, timeout=120,
        env={**os.environ, **(env or {})},
    )


def test_ray_not_installed_is_one_sentence_naming_the_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as where it is not installed: `import ray` fails
    with pytest.raises(RayError) as caught:
        check_backend("ray", None)
    assert str(caught.value) == f"--backend ray needs Ray, which is not installed here; install it with {INSTALL}."
    hidden = "import sys; sys.modules['ray'] = None; from ledger_tui.cli import main; sys.argv[0] = 'ledger-tui'; main()"
    out = run_cli("eval", "-d", "airline", "--agent", "gold", "--backend", "ray", "-o", str(tmp_path / "out"),
                  python=[sys.executable, "-c", hidden])
    assert INSTALL in one_sentence_error(out)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "flags, words",
    [
        (["--backend", "ray", "--ray-address", "127.0.0.1:{port}"], "No Ray cluster answers at 127.0.0.1:{port} (connection refused)"),
        (["--backend", "ray"], "No Ray cluster answers at 127.0.0.1:{port} (connection refused)"),  # from RAY_ADDRESS
        (["--backend", "ray", "--ray-address", "ray://127.0.0.1:{port}"],
         "No Ray Client server answers at ray://127.0.0.1:{port} (connection refused); the head serves one (port 10001) only "
         "with Ray's client package installed there"),
        (["--backend", "ray", "--ray-address", "head-without-port"], "--ray-address 'head-without-port' is not HOST:PORT"),
        (["--ray-address", "127.0.0.1:{port}"], "--ray-address needs --backend ray"),
        (["--backend", "spark"], "Unknown --backend 'spark'; choose local"),
    ],
)
def test_an_unusable_backend_or_cluster_address_is_one_sentence_and_writes_nothing(tmp_path, flags, words):
    port = free_port()
    flags = [f.format(port=port) for f in flags]
    out = run_cli("eval", "-d", "airline", "--agent", "gold", "-o", str(tmp_path / "out"), *flags, env={"RAY_ADDRESS": f"127.0.0.1:{port}"})
    assert words.format(port=port) in one_sentence_error(out)
    assert out.stdout == "", "no progress bar (not even the end of its line) before the runs start"
    assert not (tmp_path / "out").exists()


@pytest.fixture(scope="module")
def airline_model():
    """The model of the CLI tests: the gold run of `start`'s task, replayed (benchmarks/eval.py)."""
    # 150 ms a call: the runs left when a worker is killed take over a second, so a loaded machine
    # (CI beside other jobs) does not finish them all first (the Ctrl-C tests hold the model instead:
    # `held`)
    with LoopbackServer(responder_for("airline"), latency=0.15, keep_requests=False) as running:
        yield running


def test_ctrl_c_on_ray_keeps_every_finished_run_and_leaves_no_actor(held, tmp_path):
    # (a resume after an interruption is the same on either backend: see the in-process test above)
    # No --ray-address: the eval starts a local Ray instance of its own and must end it after the
    # Ctrl-C too, as a user's eval on one machine does (the other CLI tests join `ray_head`)
    out = tmp_path / "out"
    proc = start(held, out, "--backend", "ray")
    wait_for_lines(out, 2, proc)
    said = interrupt_once(proc, held)  # once: the runs in flight finish, no more start
    held.gate.release()
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    kept = load_results(out)
    assert len(kept) == 2 + in_flight(said) < CLI_RUNS  # (an actor keeps its trajectories until it sends them)
    assert stderr.strip() == f"interrupted; the {len(kept)} runs finished are saved in {out / 'results.jsonl'}, and running the same command again does the rest."
    assert actors_ended() == []
    assert all(Path(r.trajectory).exists() for r in kept)


def test_a_ray_worker_that_dies_is_one_sentence_and_the_runs_finished_are_kept(airline_model, ray_head, tmp_path):
    out = tmp_path / "out"
    proc = start(airline_model, out, "--backend", "ray", "--ray-address", ray_head)
    wait_for_lines(out, 2, proc)
    pids = actor_pids()  # (the eval's: this process's tests run one at a time, and the ones before ended theirs)
    assert len(pids) == 2
    assert any(home.startswith(f"ledger-tui-ray-{pids[0]}-") for home in actor_homes())
    os.kill(pids[0], signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=90)
    line = one_sentence_error(subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr))
    kept = load_results(out)
    assert 2 <= len(kept) < CLI_RUNS
    assert line.startswith("error: Ray worker ") and " of 2 died on " in line, line
    assert "(its process ended: killed, out of memory or a crash)" in line, "its machine is still in the cluster"
    assert "A worker died" not in stdout, "Ray's own report of it is not printed beside the sentence"
    # the killed actor could not remove its folder; the other one, on the same machine, did as it stopped
    assert not any(home.startswith(f"ledger-tui-ray-{pids[0]}-") for home in actor_homes())
    assert f"in flight; {len(kept)} finished runs are saved in results.jsonl, and running the same command again redoes the {CLI_RUNS - len(kept)} left." in line
    assert actors_ended() == []


@pytest.fixture
def token_cluster():
    """A Ray cluster as `ray start --head` makes one on a machine that has a token (Ray then turns
    its token authentication on), in a home and temporary folder of its own; its address, and the
    environment of a machine that has the token but has not set RAY_AUTH_MODE."""
    home = Path(tempfile.mkdtemp(prefix="lt-home-"))
    temp = tempfile.mkdtemp(prefix="lt-ray-", dir="/tmp")  # (short: Ray's socket paths must fit)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")} | {"HOME": str(home)}
    bin_dir = Path(sys.executable).parent
    subprocess.run([bin_dir / "ray", "get-auth-token", "--generate"], env=env, capture_output=True, check=True, timeout=60)
    port = free_port()
    head = subprocess.Popen(
        [bin_dir / "ray", "start", "--head", f"--port={port}", "--num-cpus=1", "--include-dashboard=false",
         f"--ray-client-server-port={free_port()}", f"--temp-dir={temp}", "--block"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 90
        status = [bin_dir / "ray", "status", f"--address=127.0.0.1:{port}"]
        while subprocess.run(status, env={**env, "RAY_AUTH_MODE": "token"}, capture_output=True, timeout=60).returncode:
            if time.monotonic() > deadline or head.poll() is not None:
                pytest.fail("`ray start --head` with a token did not come up within 90 s")
            time.sleep(0.5)
        yield f"127.0.0.1:{port}", env
    finally:  # (at once: `ray start --block` takes half a minute to stop when asked)
        os.killpg(head.pid, signal.SIGKILL)
        for entry in Path("/proc").iterdir():  # its processes that left the group
            try:
                if entry.name.isdigit() and temp.encode() in (entry / "cmdline").read_bytes():
                    os.kill(int(entry.name), signal.SIGKILL)
            except OSError:
                pass
        head.wait(timeout=60)
        for folder in (home, temp):
            shutil.rmtree(folder, ignore_errors=True)


def test_a_cluster_with_token_authentication_refuses_in_one_sentence_and_joins_with_its_token(token_cluster, tmp_path):
    address, env = token_cluster
    flags = ["eval", "-d", "airline", "--agent", "gold", "--tasks", "airline_01_cancel_recent_booking", "--backend", "ray", "--ray-address", address]
    # (Ray tries a refused connection once a second for 20 s; three tries show the same refusal)
    refused = subprocess.run(
        [sys.executable, "-m", "ledger_tui", *flags, "-o", str(tmp_path / "refused")],
        capture_output=True, text=True, cwd=ROOT, timeout=180, env={**env, "RAY_gcs_server_port_wait_time_s": "3"},
    )
    assert one_sentence_error(refused) == (
        f"error: The Ray cluster at {address} uses token authentication and refused this machine (no token sent, or not the "
        "cluster's); run the eval with RAY_AUTH_MODE=token and the head's token in ~/.ray/auth_token or RAY_AUTH_TOKEN, as "
        "`ray start --address` on the other machines needs too."
    )
    assert refused.stdout == ""
    assert not (tmp_path / "refused").exists()
    joined = subprocess.run(
        [sys.executable, "-m", "ledger_tui", *flags, "-o", str(tmp_path / "joined")],
        capture_output=True, text=True, cwd=ROOT, timeout=180, env={**env, "RAY_AUTH_MODE": "token"},
    )
    assert joined.returncode == 0, joined.stderr
    assert [r.passed for r in load_results(tmp_path / "joined")] == [True]
