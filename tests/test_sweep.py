"""`dfst sweep` and the executors: a grid of cells, skipped when stored, the same weights serially and
on a local Ray bound to 127.0.0.1, a failing cell retried once and reported without ending the sweep."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from cli_helpers import assert_one_line_error, run, run_json
from dfst.errors import DfstError
from dfst.studies.executors import error_line, ray_available, run_cells

SPEC = """tasks = ["add2"]
seeds = 2
time_budget = 5
certify = false
[fixed]
iters = 20
restarts = 1
finetune = false
[grid]
noise = [0.0, 0.03]
"""

needs_ray = pytest.mark.skipif(not ray_available(), reason="ray is not installed (pip install 'dfst[ray]')")


def write_spec(tmp_path: Path, text: str = SPEC) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(text)
    return path


def sweep(capsys, tmp_path: Path, name: str, *extra: str, spec: Path | None = None):
    spec = spec or write_spec(tmp_path)
    return run_json(capsys, "sweep", spec, "--results", tmp_path / name, "--runs", tmp_path / f"{name}-runs",
                    *extra)


def weights(runs: Path) -> dict[str, str]:
    """{run: sha256 of its model's weights} under a runs directory (a sweep's or reproduce's)."""
    return {str(p.parent.parent.relative_to(runs)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(runs.rglob("s*/model/model.safetensors"))}


@pytest.fixture(scope="module")
def serial_sweep(tmp_path_factory) -> tuple[Path, dict]:
    """The tiny sweep run serially once for the module: (the directory holding its spec, `serial` and
    `serial-runs`, the run's JSON report). A test that sweeps into it again works on a copy."""
    from dfst.cli import main

    root = tmp_path_factory.mktemp("sweep")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(["sweep", str(write_spec(root)), "--results", str(root / "serial"),
                     "--runs", str(root / "serial-runs"), "--json"])
    assert code == 0
    return root, json.loads(printed.getvalue())


def test_a_serial_sweep_runs_every_cell_and_a_second_run_skips_them_all(capsys, tmp_path, serial_sweep):
    shutil.copytree(serial_sweep[0], tmp_path, dirs_exist_ok=True)
    report = serial_sweep[1]
    assert (report["cells"], report["skipped"], report["failed"]) == (4, 0, [])
    rows = report["rows"]
    assert {(r["options"]["noise"], r["system"]) for r in rows} == {
        (noise, system) for noise in (0.0, 0.03) for system in ("DFST", "DFST (extracted)")}
    assert all(r["seeds"] == 2 and r["task"] == "add2" for r in rows)
    cells = sorted((tmp_path / "serial").glob("*/cell.json"))
    assert len(cells) == 4 and len(weights(tmp_path / "serial-runs")) == 4
    stamps = {p: p.stat().st_mtime_ns for p in (tmp_path / "serial-runs").rglob("train_state.safetensors")}
    again = sweep(capsys, tmp_path, "serial")
    assert (again["skipped"], again["rows"]) == (4, rows)
    assert stamps == {p: p.stat().st_mtime_ns for p in stamps}  # nothing trained again


@needs_ray
def test_the_ray_executor_gives_the_serial_weights_and_skips_what_is_stored(capsys, tmp_path, serial_sweep):
    root, serial = serial_sweep
    on_ray = sweep(capsys, tmp_path, "ray", "--executor", "ray", "--workers", "2")
    assert on_ray["executor"] == "ray" and on_ray["failed"] == []
    assert weights(tmp_path / "ray-runs") == weights(root / "serial-runs")
    figures = ("system", "options", "seeds", "robust_lg_median", "probabilistic_lg_median", "successes")
    assert [{k: r[k] for k in figures} for r in on_ray["rows"]] == [{k: r[k] for k in figures}
                                                                     for r in serial["rows"]]
    assert sweep(capsys, tmp_path, "ray", "--executor", "ray", "--workers", "2")["skipped"] == 4


@needs_ray
def test_a_ray_that_dfst_starts_listens_on_loopback_only_and_runs_at_our_priority():
    if shutil.which("ss") is None:
        pytest.skip("ss (iproute2) is not installed")
    from dfst.studies.executors import start_ray

    ray = start_ray(None, 2)
    try:
        # a worker up, with its own server, at the driver's priority (Ray's default niceness is 15)
        assert ray.get(ray.remote(num_cpus=1)(lambda: os.nice(0)).remote()) == os.nice(0)
        ours = _descendants(os.getpid())
        listening = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=True).stdout
        addresses = [line.split()[3] for line in listening.splitlines()
                     if any(int(pid) in ours for pid in re.findall(r"pid=(\d+)", line))]
    finally:
        ray.shutdown()
    assert len(addresses) >= 3  # the GCS, the raylet and a worker at least
    assert all(a.rsplit(":", 1)[0] in ("127.0.0.1", "[::ffff:127.0.0.1]") for a in addresses), addresses


def _descendants(root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = {root}, [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def test_a_failing_cell_is_retried_once_reported_and_the_others_finish(capsys, tmp_path, monkeypatch):
    import dfst.studies.cells

    real, calls = dfst.studies.cells.reproduce_seed, []

    def flaky(task, seed, *args, **kwargs):
        calls.append(seed)
        if seed == 1:
            raise RuntimeError("disk on fire")
        return real(task, seed, *args, **kwargs)

    monkeypatch.setattr(dfst.studies.cells, "reproduce_seed", flaky)
    spec = write_spec(tmp_path, SPEC.replace("noise = [0.0, 0.03]", "noise = [0.0]"))
    where = ("--results", tmp_path / "r", "--runs", tmp_path / "runs")
    code, out, err = run(capsys, "sweep", spec, *where, "--csv")
    assert code == 1 and calls == [0, 1, 1]
    failed = [line for line in err.splitlines() if line.startswith("dfst: failed:")]
    assert len(failed) == 1 and "add2 seed 1" in failed[0] and "RuntimeError: disk on fire" in failed[0]
    # CSV columns: task, noise, system, seeds, failed
    assert "tried 2 times" in failed[0] and "\nadd2,0.0,DFST,1,1," in out


def test_run_cells_keeps_the_order_and_one_line_errors():
    def square(x):
        if x == 3:
            raise DfstError("three is\nunlucky")
        return x * x

    outcomes = run_cells(square, [1, 2, 3, 4])
    assert [o.value for o in outcomes] == [1, 4, None, 16]
    assert (outcomes[2].error, outcomes[2].attempts) == ("three is", 2)
    try:
        {}["missing"]
    except KeyError as exc:
        assert re.fullmatch(r"KeyError: 'missing' at test_sweep\.py:\d+", error_line(exc))


@pytest.mark.parametrize("text, fragment", [
    ("tasks = []", "'tasks' must be a non-empty list"),
    ('tasks = ["nope"]', "task 'nope' has no recipe"),
    ('tasks = ["add2"]\ncolour = 1', "unknown key 'colour'"),
    ('tasks = ["add2"]\nseeds = 0', "'seeds' must be a count >= 1"),
    ('tasks = ["add2"]\n[grid]\nnoise = []', "grid option 'noise' must be a non-empty list"),
    ('tasks = ["add2"]\n[fixed]\nseed = 3', "'seed' is set by the sweep"),
    ('tasks = ["add2"]\n[fixed]\nnoise = 0.1\n[grid]\nnoise = [0.0]', "'noise' is both fixed and in"),
    ('tasks = ["add2"]\n[fixed]\nwarp = 9', "add2 with warp=9"),
    ('tasks = ["add2"]\n[grid]\niters = [0]', "add2 with iters=0"),
    ('tasks = ["add2"\n', "not valid TOML"),
])
def test_bad_sweep_files_are_one_line_errors_before_any_work(capsys, tmp_path, text, fragment):
    spec = write_spec(tmp_path, text)
    code, _, err = run(capsys, "sweep", spec, "--results", tmp_path / "r", "--runs", tmp_path / "runs")
    assert_one_line_error(code, err, fragment)
    assert not (tmp_path / "r").exists() and not (tmp_path / "runs").exists()


def test_an_unknown_executor_is_refused(capsys, tmp_path):
    spec = write_spec(tmp_path)
    code, _, err = run(capsys, "sweep", spec, "--executor", "slurm", "--results", tmp_path / "r")
    assert_one_line_error(code, err, "unknown executor 'slurm'")


# slow: a second Ray start-up for the path the sweep test above takes (reproduce and sweep both run
# `dfst.studies.cells.run_cell` over Cells through `run_cells`); reproduce's own executor path is
# test_reproduce_through_cells_reports_a_failed_seed_and_tabulates_the_others
@pytest.mark.slow
@needs_ray
def test_reproduce_on_ray_stores_what_the_serial_reproduce_stores(capsys, tmp_path):
    args = ("reproduce", "--tasks", "add2:0-1", "--iters", "10", "--restarts", "1", "--no-finetune",
            "--no-certify", "--time-budget", "5")
    serial = run_json(capsys, *args, "--runs", tmp_path / "s-runs", "--results", tmp_path / "s")
    on_ray = run_json(capsys, *args, "--runs", tmp_path / "r-runs", "--results", tmp_path / "r",
                      "--executor", "ray", "--workers", "2")
    figures = ("task", "system", "seeds", "robust_lg_median", "probabilistic_lg_median", "successes")
    assert [{k: r[k] for k in figures} for r in on_ray] == [{k: r[k] for k in figures} for r in serial]
    assert weights(tmp_path / "r-runs") == weights(tmp_path / "s-runs")
    assert sorted(p.name for p in (tmp_path / "r").glob("*.json")) == sorted(
        p.name for p in (tmp_path / "s").glob("*.json"))


def test_reproduce_through_cells_reports_a_failed_seed_and_tabulates_the_others(tmp_path, monkeypatch):
    """reproduce's executor path (cells): a seed that fails twice goes to on_failure, the rest to the
    rows. The executor is the serial one standing in for Ray, so that the failure can be injected."""
    import dfst.studies.cells
    from dfst.studies.executors import run_cells as serial_cells
    from dfst.studies.reproduce import reproduce

    real = dfst.studies.cells.reproduce_seed

    def flaky(task, seed, *args, **kwargs):
        if seed == 1:
            raise DfstError("seed 1 is cursed")
        return real(task, seed, *args, **kwargs)

    monkeypatch.setattr(dfst.studies.cells, "reproduce_seed", flaky)
    monkeypatch.setattr(dfst.studies.cells, "run_cells", lambda fn, cells, **kw: serial_cells(
        fn, cells, on_update=kw.get("on_update")))
    failed, seen = [], []
    rows = reproduce({"add2": [0, 1]}, tmp_path / "runs", tmp_path / "results", time_budget=5, certify=False,
                     overrides={"iters": 10, "restarts": 1, "finetune": False}, executor="ray",
                     on_failure=failed.append, on_seed=lambda task, seed, got: seen.append(seed))
    assert seen == [0] and len(failed) == 1 and "add2 seed 1: seed 1 is cursed (tried 2 times)" in failed[0]
    assert {r["seeds"] for r in rows} == {1}


def test_a_file_of_the_users_where_a_cell_json_goes_is_refused_before_any_cell_runs(capsys, tmp_path):
    spec = write_spec(tmp_path, SPEC.replace("seeds = 2", "seeds = 1").replace("noise = [0.0, 0.03]",
                                                                                "noise = [0.0]"))
    where = ("--results", tmp_path / "r", "--runs", tmp_path / "runs")
    sweep(capsys, tmp_path, "r", spec=spec)  # finds its cell directory
    cell = next((tmp_path / "r").glob("*/cell.json"))
    for result in cell.parent.glob("add2*.json"):
        result.unlink()
    cell.write_text("mine")
    code, _, err = run(capsys, "sweep", spec, *where)
    assert_one_line_error(code, err, "was not written by dfst")
    assert cell.read_text() == "mine"


def test_a_sweep_is_planned_in_one_call_before_any_cell_runs(tmp_path, monkeypatch):
    from dfst.studies.sweep import plan_sweep

    monkeypatch.chdir(tmp_path)
    cells, results = plan_sweep(write_spec(tmp_path))
    assert len(cells) == 4 and results == Path("results") / "sweeps" / "tiny"
    assert {c.task for c in cells} == {"add2"} and not (tmp_path / "results").exists()
    cells, results = plan_sweep(write_spec(tmp_path), tmp_path / "r", tmp_path / "s")
    assert results == tmp_path / "s" and len(cells) == 4
