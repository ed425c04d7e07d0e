"""A run directory through the commands a user runs on it next: the stored command reproduces the run,
dfst eval RUN leaves files that --force may replace, report and hints speak of runs."""

from __future__ import annotations

import json
import shlex

import pytest

from cli_helpers import TRAIN_ADD2, assert_one_line_error, run, run_json, training_code

TINY = ("--iters", "40", "--restarts", "1", "--samples", "6", "--max-digits", "2", "--eval-every", "0",
        "--eval-digits", "3")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs") / "r"
    from dfst.cli import main

    code = main([*TRAIN_ADD2, "--out", str(out), *TINY, "--json"])
    assert code == training_code(json.loads((out / "summary.json").read_text()))
    return out


def test_the_stored_command_trains_the_same_run_again(capsys, trained, tmp_path):
    capsys.readouterr()
    argv = shlex.split(json.loads((trained / "config.json").read_text())["command"])[1:]
    argv[argv.index("--out") + 1] = str(tmp_path / "again")
    run_json(capsys, *argv)
    weights = "model/model.safetensors"
    assert (tmp_path / "again" / weights).read_bytes() == (trained / weights).read_bytes()


def test_a_run_evaluated_in_place_trains_again_with_force(capsys, tmp_path):
    out = tmp_path / "r"
    run_json(capsys, *TRAIN_ADD2, "--out", out, *TINY)
    code, _, _ = run(capsys, "eval", out, "--digits", "3")
    assert code in (0, 1) and (out / "model" / "eval.json").exists()
    assert run_json(capsys, *TRAIN_ADD2, "--out", out, *TINY, "--force")["iterations"] == 40
    assert not (out / "model" / "eval.json").exists()  # the old evaluation went with the old weights


def test_report_takes_a_run_directory(capsys, trained):
    run(capsys, "eval", trained, "--digits", "3", "--json")
    rows = run_json(capsys, "report", trained)
    report = json.loads((trained / "model" / "eval.json").read_text())
    assert rows[0]["robust LG"] == report["robust_max_digits"]


def test_a_run_without_an_extracted_automaton_says_what_to_run(capsys, tmp_path):
    out = tmp_path / "p"
    run_json(capsys, *TRAIN_ADD2, "--out", out, *TINY, "--no-extract")
    code, _, err = run(capsys, "eval", out, "--extracted")
    assert_one_line_error(code, err, f"dfst extract {out} --method lockstep --out DIR, then dfst eval DIR")
