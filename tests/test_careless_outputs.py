"""A careless user's files stay theirs, and a table counts only what it says it counts: reports inside
a checkpoint, concurrent writers of one output, a sweep beside the headline results, CSV for programs,
and replay's words after an evaluation."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest
import torch

from cli_helpers import assert_one_line_error, hold_in_subprocess, run, run_json
from dfst.model import DFST
from dfst.model.checkpoint import save_checkpoint
from dfst.model.compile import compile_agent
from dfst.tasks import TASKS

REPO_RESULTS = Path(__file__).resolve().parents[1] / "results"


@pytest.fixture
def checkpoint(capsys, tmp_path) -> Path:
    out = tmp_path / "ck"
    run_json(capsys, "compile", "add2", "--out", out)
    return out


# ----------------------------------------------------------------------------- eval's reports


@pytest.mark.parametrize("name", ["eval.json", "eval.png", "first_failure.json"])
def test_eval_never_replaces_or_removes_a_report_file_the_user_wrote(capsys, checkpoint, name):
    mine = checkpoint / name
    mine.write_bytes(b'{"mine": 1}\n' if name.endswith(".json") else b"\x89PNG my own picture")
    before = {p.name: p.read_bytes() for p in checkpoint.iterdir()}
    code, _, err = run(capsys, "eval", checkpoint, "--digits", "5")
    assert_one_line_error(code, err, f"{mine} was not written by dfst")
    assert {p.name: p.read_bytes() for p in checkpoint.iterdir()} == before


def test_eval_still_replaces_its_own_reports(capsys, checkpoint):
    run_json(capsys, "eval", checkpoint, "--digits", "5")
    first = json.loads((checkpoint / "eval.json").read_text())
    assert run_json(capsys, "eval", checkpoint, "--digits", "6")["levels"][0]["digits"] == 6
    assert json.loads((checkpoint / "eval.json").read_text()) != first


def test_compile_force_never_removes_a_users_file_named_like_a_report(capsys, checkpoint):
    (checkpoint / "eval.json").write_text('{"mine": 1}')
    code, _, err = run(capsys, "compile", "add2", "--out", checkpoint, "--force")
    assert_one_line_error(code, err, "eval.json was not written by dfst")
    assert (checkpoint / "eval.json").read_text() == '{"mine": 1}'


# ----------------------------------------------------------------------------- one writer per output

def hold_output(path: Path) -> subprocess.Popen:
    """Another dfst process that is writing `path` (it has claimed it) until killed."""
    return hold_in_subprocess("from dfst.io.outputs import claim_output; claim_output(sys.argv[1])", path)


def test_a_second_writer_of_one_dataset_is_refused_then_free_once_the_first_dies(capsys, tmp_path):
    out = tmp_path / "same.zip"
    holder = hold_output(out)
    try:
        code, _, err = run(capsys, "data", "add2", "--samples", "2", "--out", out)
        assert_one_line_error(code, err, f"output {out} is in use by dfst pid {holder.pid}")
        assert not out.exists()
    finally:
        holder.kill()  # kill -9: the kernel drops its lock
        holder.wait()
    assert run_json(capsys, "data", "add2", "--samples", "2", "--out", out)["samples"] == 2
    code, _, err = run(capsys, "data", "add2", "--samples", "2", "--out", out)  # written: now it exists
    assert_one_line_error(code, err, "already exists")


def test_a_second_evaluation_of_one_checkpoint_is_refused(capsys, checkpoint):
    holder = hold_output(checkpoint / "eval.json")
    try:
        code, _, err = run(capsys, "eval", checkpoint, "--digits", "5")
        assert_one_line_error(code, err, "eval.json is in use by dfst pid")
    finally:
        holder.kill()
        holder.wait()
    assert not (checkpoint / "eval.json").exists()


def test_the_same_file_through_another_spelling_is_the_same_claim(capsys, tmp_path):
    (tmp_path / "sub").mkdir()
    holder = hold_output(tmp_path / "sub" / ".." / "same.zip")
    try:
        code, _, err = run(capsys, "data", "add2", "--samples", "2", "--out", tmp_path / "same.zip")
        assert_one_line_error(code, err, "is in use by dfst pid")
    finally:
        holder.kill()
        holder.wait()


# ----------------------------------------------------------------------------- tables


def _results_with_a_sweep(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    (root / "dfst").mkdir(parents=True)
    shutil.copy(REPO_RESULTS / "dfst" / "add2-s1.json", root / "dfst" / "add2-s1.json")
    for cell in ("c1", "c2"):
        where = root / "sweeps" / "tiny" / cell
        (where / "dfst").mkdir(parents=True)
        (where / "cell.json").write_text(json.dumps({"task": "add2", "dfst_version": "0"}))
        data = json.loads((REPO_RESULTS / "dfst" / "add2-s1.json").read_text())
        data |= {"seed": 0, "robust_lg": 10, "probabilistic_lg": 10}
        (where / "dfst" / "add2-s0.json").write_text(json.dumps(data))
    return root


def test_table_leaves_a_sweeps_cells_out_unless_asked(capsys, tmp_path):
    root = _results_with_a_sweep(tmp_path)
    code, out, err = run(capsys, "table", "--results", root, "--json")
    [row] = json.loads(out)
    assert code == 0 and (row["seeds"], row["robust_lg_median"]) == (1, 100000)
    assert "left out the results of 2 sweep cells" in err
    [row] = run_json(capsys, "table", "--results", root, "--sweeps")
    assert (row["seeds"], row["robust_lg_median"]) == (3, 10)
    [row] = run_json(capsys, "table", "--results", root / "sweeps" / "tiny")  # a sweep pointed at: counted
    assert row["seeds"] == 2
    [row] = run_json(capsys, "table", "--results", root / "sweeps" / "tiny" / "c1")
    assert row["seeds"] == 1


def test_table_readme_refuses_sweeps(capsys, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("x")
    code, _, err = run(capsys, "table", "--results", _results_with_a_sweep(tmp_path), "--readme", readme,
                       "--sweeps")
    assert_one_line_error(code, err, "--readme", "--sweeps")
    assert readme.read_text() == "x"


def test_table_csv_holds_values_not_text_for_people(capsys):
    code, out, _ = run(capsys, "table", "--results", REPO_RESULTS, "--csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and rows
    for row in rows:
        assert int(row["seeds"]) >= 1 and "," not in row["robust_lg"]
        assert int(row["robust_lg"]) >= int(float(row["robust_lg_median"])) >= 0
        if row["params"]:
            assert int(row["params"]) >= 0


# ----------------------------------------------------------------------------- replay's words


def test_replay_after_an_exact_evaluation_says_there_is_nothing_to_replay(capsys, checkpoint):
    run_json(capsys, "eval", checkpoint, "--digits", "5")
    code, _, err = run(capsys, "replay", checkpoint)
    assert_one_line_error(code, err, "nothing to replay", "failed no instance")
    assert "run dfst eval first" not in err


def test_replay_of_an_overflow_does_not_name_two_identical_actions(capsys, tmp_path):
    A, B, C, h0 = (torch.from_numpy(w) for w in compile_agent(TASKS["add2"].agent).numpy_weights())
    out = save_checkpoint(DFST.from_weights(A * 1e20, B, C, h0, task="add2"), tmp_path / "big", {})
    run_json(capsys, "eval", out, "--digits", "3", "--random", "2", expect=1)
    code, text, _ = run(capsys, "replay", out)
    assert code == 1 and "h leaves the finite range at step 1" in " ".join(text.split())
    assert "parts from the expert" not in text
    departure = run_json(capsys, "replay", out, expect=1)["departure"]
    assert departure["why"] == "non_finite" and departure["expected"] == departure["got"]


def test_a_second_writer_of_one_checkpoint_or_report_directory_is_refused(capsys, tmp_path):
    holder = hold_output(tmp_path / "ck")
    try:
        code, _, err = run(capsys, "compile", "add2", "--out", tmp_path / "ck")
        assert_one_line_error(code, err, f"output {tmp_path / 'ck'} is in use by dfst pid {holder.pid}")
    finally:
        holder.kill()
        holder.wait()
    assert not (tmp_path / "ck").exists()
    assert run_json(capsys, "compile", "add2", "--out", tmp_path / "ck")["task"] == "add2"


@pytest.mark.parametrize("argv", [("solve", "add10", "987", "45", "--shw"), ("solve", "add10", "--shw")])
def test_a_mistyped_option_after_operands_is_named_as_an_option(capsys, argv):
    code, _, err = run(capsys, *argv)
    assert_one_line_error(code, err, "--shw")
    assert "o such option: --shw" in err and "extra argument" not in err and "operands" not in err


def test_lock_files_left_by_killed_holders_are_swept_and_held_ones_kept(tmp_path):
    import os
    import time

    from dfst.io import outputs

    dead, alive = tmp_path / "dead.zip", tmp_path / "alive.zip"
    killed, holder = hold_output(dead), hold_output(alive)
    try:
        killed.kill()  # kill -9: the kernel drops its lock, its lock file stays
        killed.wait()
        locks = [outputs.claim_lock_path(p) for p in (dead, alive)]
        assert all(lock.exists() for lock in locks)
        old = time.time() - 2 * outputs.STALE_CLAIM_SECONDS
        for lock in locks:
            os.utime(lock, (old, old))
        outputs._claims_directory.cache_clear()  # the sweep runs once a process, when it first claims
        outputs._claims_directory()
        assert not locks[0].exists() and locks[1].exists()
    finally:
        holder.kill()
        holder.wait()
