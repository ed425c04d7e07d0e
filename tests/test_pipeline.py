"""The whole pipeline through the CLI, as a user runs it, checking the figures at every step:
solve -> data -> coverage -> train (tiny) -> extract -> eval -> certify -> replay -> report.

Each step's figures are checked against an independent source: Python's integers for the expert,
the coverage of the data for the automaton's size, RUN/extracted for `dfst extract RUN`, the
certifier's verdict against the evaluator's, and eval.json against `dfst report`.
"""

from __future__ import annotations

import json

import pytest

from cli_helpers import TRAIN_ADD2, run, run_json

TRAIN = ("--iters", "1000", "--restarts", "4", "--eval-every", "0", "--eval-digits", "10")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("pipeline")


def test_the_pipeline_from_expert_to_certificate(capsys, workdir):
    a, b = "110101", "1011"
    solved = run_json(capsys, "solve", "add2", a, b)
    assert solved["result"] == bin(int(a, 2) + int(b, 2))[2:] and solved["correct"]

    data = workdir / "add2.pto.zip"
    recorded = run_json(capsys, "data", "add2", "--samples", "60", "--out", data)
    assert recorded["samples"] == 60 and recorded["digits_max"] <= 3
    covered = run_json(capsys, "coverage", "add2", "--data", data)
    assert covered["covered"] == covered["rules"] == 24  # every expert rule is in the PTOs

    run_dir = workdir / "run"
    summary = run_json(capsys, *TRAIN_ADD2, "--data", data, "--out", run_dir, *TRAIN)
    assert summary["samples"] == 60 and summary["iterations"] == 1000
    assert summary["extracted"]["rules"] == 24  # every rule the data shows, nothing invented

    extracted = run_json(capsys, "extract", run_dir, "--out", workdir / "again")
    again, saved = workdir / "again" / "agent.json", run_dir / "extracted" / "agent.json"
    assert again.read_bytes() == saved.read_bytes()
    assert (extracted["states"], extracted["rules"]) == (summary["extracted"]["states"], 24)

    digits = ("--digits", "10,100,1000")
    automaton = run_json(capsys, "eval", run_dir, "--extracted", *digits)
    assert automaton["checkpoint"] == str(run_dir / "extracted")
    assert automaton["robust_max_digits"] == 1000
    proof = run_json(capsys, "certify", run_dir, "--extracted")
    assert proof["verdict"] == "CERTIFIED" and proof["checker"] == "ok"

    code, out, _ = run(capsys, "eval", run_dir, *digits, "--json")
    weights = json.loads(out)
    assert weights["checkpoint"] == str(run_dir / "model")
    assert code == (0 if weights["robust_max_digits"] == 1000 else 1)
    code, out, _ = run(capsys, "certify", run_dir, "--json")
    verdict = json.loads(out)["verdict"]
    assert code == (0 if verdict == "CERTIFIED" else 1)
    if verdict == "CERTIFIED":  # a proof for every length: no evaluated length can fail
        assert weights["robust_max_digits"] == 1000
    if weights["first_failure"] is not None:  # the saved failure fails again, as eval said
        assert run_json(capsys, "replay", run_dir, expect=1)["exact"] is False

    rows = run_json(capsys, "report", run_dir / "extracted", run_dir / "model")
    assert [r["robust LG"] for r in rows] == [1000, weights["robust_max_digits"]]
