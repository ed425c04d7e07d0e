"""The model commands `compile`, `eval`, `replay` and `bench rollout`: reports and files that scripts
rely on, and one-line errors with exit code 2 for every bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from cli_helpers import assert_one_line_error, run, run_json
from dfst.model import DFST
from dfst.model.checkpoint import save_checkpoint
from dfst.model.compile import compile_agent
from dfst.tasks import TASKS

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def expert_dir(tmp_path, capsys) -> Path:
    out = tmp_path / "expert"
    info = run_json(capsys, "compile", "add2", "--out", out)
    assert (info["task"], info["k"], info["d"]) == ("add2", 3, 9)
    return out


@pytest.fixture
def rewired_dir(tmp_path, capsys) -> Path:
    """add2 whose carry ripple writes 1 instead of 0: wrong on 1 + 11…1, right on random pairs."""
    agent_file = tmp_path / "a.json"
    assert run(capsys, "agent", "add2", "--out", agent_file)[0] == 0
    data = json.loads(agent_file.read_text())
    [rule] = [r for r in data["rules"] if (r["state"], r["read"]) == ("carry", "1")]
    assert rule["write"] == "0"
    rule["write"] = "1"
    agent_file.write_text(json.dumps(data))
    out = tmp_path / "rewired"
    assert run_json(capsys, "compile", "add2", "--agent", agent_file, "--out", out)["task"] == "add2"
    return out


def test_overflowing_model_is_exact_only_when_rescaled(capsys, tmp_path):
    """The add2 expert with A scaled by 1e20: h overflows float32 at step 2 unless rescaled."""
    A, B, C, h0 = (torch.from_numpy(w) for w in compile_agent(TASKS["add2"].agent).numpy_weights())
    out = save_checkpoint(DFST.from_weights(A * 1e20, B, C, h0, task="add2"), tmp_path / "big", {})
    report = run_json(capsys, "eval", out, "--digits", "3", "--random", "2", expect=1)
    assert report["robust_max_digits"] == 0 and report["first_failure"]["outcome"] == "non_finite"
    verdict = run_json(capsys, "replay", out, expect=1)  # replayed as evaluated: plain
    assert (verdict["exact"], verdict["outcome"], verdict["steps"]) == (False, "non_finite", 2)
    report = run_json(capsys, "eval", out, "--digits", "3,30", "--random", "2", "--rescale")
    assert (report["mode"], report["robust_max_digits"], report["first_failure"]) == ("rescaled", 30, None)


def test_compile_then_eval_is_robust_and_writes_report_and_plot(capsys, expert_dir):
    report = run_json(capsys, "eval", expert_dir, "--digits", "5,50")
    assert (report["task"], report["robust_max_digits"], report["probabilistic_max_digits"]) == \
        ("add2", 50, 50)
    assert (report["stopped_by"], report["mode"], report["first_failure"]) == ("completed", "plain", None)
    assert [lv["digits"] for lv in report["levels"]] == [5, 50]
    assert all(lv["exact"] == lv["instances"] > 10 for lv in report["levels"])
    assert json.loads((expert_dir / "eval.json").read_text())["robust_max_digits"] == 50
    assert (expert_dir / "eval.png").read_bytes()[:8] == PNG_MAGIC
    assert not (expert_dir / "first_failure.json").exists()


def test_eval_table_output(capsys, expert_dir):
    code, out, _ = run(capsys, "eval", expert_dir, "--digits", "4", "--random", "2")
    assert code == 0 and "robust to 4 digits" in out and "eval.png" in out


def test_rewired_model_fails_saves_and_replays_its_first_failure(capsys, rewired_dir):
    report = run_json(capsys, "eval", rewired_dir, "--digits", "5,50", expect=1)
    # the hard set catches it at 5 digits; at 50 a random pair of unequal lengths does too
    assert report["robust_max_digits"] == 0 and report["probabilistic_max_digits"] == 5
    first = report["first_failure"]
    assert (first["name"], first["digits"], first["outcome"]) == ("carry_chain_swapped", 5, "halted")
    saved = json.loads((rewired_dir / "first_failure.json").read_text())
    assert (saved["task"], saved["name"], saved["a"], saved["b"]) == \
        ("add2", "carry_chain_swapped", "1", "11111")
    assert Path(first["file"]) == rewired_dir / "first_failure.json"
    verdict = run_json(capsys, "replay", rewired_dir, expect=1)
    assert (verdict["name"], verdict["exact"], verdict["outcome"]) == ("carry_chain_swapped", False, "halted")
    assert verdict["expected_digits"] == 6
    part = verdict["departure"]  # where the model leaves the task's expert: the rewired rule
    assert (part["state"], part["read"], part["expected"][0], part["got"][0]) == ("carry", "1", "0", "1")
    assert part["expected"][1] == part["got"][1] and part["lead"] > 0 and 0 < part["step"] < verdict["steps"]
    assert part["h_max_abs"] == part["h0_max_abs"] == 1.0  # one-hot: no drift, a wrong rule
    code, out, _ = run(capsys, "replay", rewired_dir)
    assert code == 1 and "fails again" in out and f"parts from the expert at step {part['step']}" in out
    # The same saved instance replayed on the expert model is exact.
    other = rewired_dir.parent / "other"
    run_json(capsys, "compile", "add2", "--out", other)
    verdict = run_json(capsys, "replay", other, "--failure", rewired_dir / "first_failure.json")
    assert verdict["exact"] is True


def test_eval_of_a_good_model_removes_a_stale_failure(capsys, rewired_dir):
    run_json(capsys, "eval", rewired_dir, "--digits", "5", expect=1)
    assert (rewired_dir / "first_failure.json").exists()
    run_json(capsys, "compile", "add2", "--out", rewired_dir, "--force")  # now the expert
    report = run_json(capsys, "eval", rewired_dir, "--digits", "5")
    assert report["first_failure"] is None and report["robust_max_digits"] == 5
    assert not (rewired_dir / "first_failure.json").exists()
    code, _, err = run(capsys, "replay", rewired_dir)
    assert_one_line_error(code, err, "nothing to replay")


def test_until_fail_ends_at_max_digits(capsys, expert_dir):
    report = run_json(capsys, "eval", expert_dir, "--until-fail", "--max-digits", "40", "--digits", "5",
                      "--random", "3")
    assert report["stopped_by"] == "max_digits"
    assert [lv["digits"] for lv in report["levels"]] == [5, 10, 20, 40]
    assert report["robust_max_digits"] == 40


def test_until_fail_stops_at_failure(capsys, rewired_dir):
    report = run_json(capsys, "eval", rewired_dir, "--until-fail", "--max-digits", "40", "--digits", "5",
                      expect=1)
    assert report["stopped_by"] == "failure" and [lv["digits"] for lv in report["levels"]] == [5]


@pytest.mark.parametrize("args,fragment", [
    (["--digits", "abc"], "--digits"),
    (["--digits", "0"], ">= 1"),
    (["--digits", "5,-3"], ">= 1"),
    (["--random", "-1"], "--random"),
])
def test_eval_bad_options_are_one_line_exit_2(capsys, expert_dir, args, fragment):
    code, _, err = run(capsys, "eval", expert_dir, *args)
    assert_one_line_error(code, err, fragment)
    assert not (expert_dir / "eval.json").exists()


def test_eval_with_nothing_to_evaluate_is_one_line_exit_2(capsys, expert_dir):
    """--random 0 --no-hard leaves no instance at any length; that is a user error, not a crash."""
    code, _, err = run(capsys, "eval", expert_dir, "--digits", "5", "--random", "0", "--no-hard")
    assert_one_line_error(code, err)


def test_eval_bad_checkpoints_are_one_line_exit_2(capsys, tmp_path, expert_dir):
    code, _, err = run(capsys, "eval", tmp_path / "missing", "--digits", "5")
    assert_one_line_error(code, err, "does not exist")
    weights = expert_dir / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:50])
    code, _, err = run(capsys, "eval", expert_dir, "--digits", "5")
    assert_one_line_error(code, err, "model.safetensors")
    code, _, err = run(capsys, "replay", expert_dir)
    assert_one_line_error(code, err, "model.safetensors")


def test_compile_refuses_a_non_empty_directory(capsys, expert_dir):
    before = (expert_dir / "model.safetensors").read_bytes()
    code, _, err = run(capsys, "compile", "mult2", "--out", expert_dir)
    assert_one_line_error(code, err, "already holds a dfst checkpoint", "--force")
    assert (expert_dir / "model.safetensors").read_bytes() == before
    assert json.loads((expert_dir / "config.json").read_text())["task"] == "add2"


def test_replay_without_a_saved_failure(capsys, expert_dir, tmp_path):
    code, _, err = run(capsys, "replay", expert_dir)
    assert_one_line_error(code, err, "no saved instance")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, _, err = run(capsys, "replay", expert_dir, "--failure", bad)
    assert_one_line_error(code, err, "bad JSON")


def test_bench_rollout_json(capsys):
    result = run_json(capsys, "bench", "rollout", "--dims", "12", "--digits", "2000", "--torch-steps", "500",
                      "--repeats", "1", "--memory-digits", "1000")
    [row] = result["rollout"]
    assert row["d"] == 12 and row["exact"] is True and row["ratio"] > 1
    assert row["engine_steps"] >= 3 * 2000  # three steps a column
    memory = result["memory"]
    assert memory["digits"] == 1000 and memory["exact"] is True and memory["steps"] >= 3 * 1000


@pytest.mark.parametrize("args", [
    ["--dims", "8"],            # smaller than the add2 expert's 9 states
    ["--dims", "x"],
    ["--repeats", "0"],
    ["--torch-steps", "0"],
    ["--digits", "0"],
    ["--memory-digits", "0"],
])
def test_bench_bad_options_are_one_line_exit_2(capsys, args):
    options = {"--dims": "12", "--digits": "50", "--torch-steps": "20", "--repeats": "1",
               "--memory-digits": "50"} | {args[0]: args[1]}
    code, _, err = run(capsys, "bench", "rollout", *[x for kv in options.items() for x in kv], "--json")
    assert_one_line_error(code, err)
