"""The CLI: outputs that scripts rely on, and one-line errors with exit code 2 for every bad input."""

from __future__ import annotations

import json

import pytest

from cli_helpers import assert_one_line_error, run
from dfst.automata import param_count
from dfst.tasks import TASKS


def test_tasks_json_lists_sizes(capsys):
    code, out, _ = run(capsys, "tasks", "--json")
    rows = json.loads(out)
    assert code == 0 and [r["task"] for r in rows] == list(TASKS)
    for r in rows:
        agent = TASKS[r["task"]].agent
        assert (r["k"], r["d"]) == (agent.k, agent.d)
        assert r["params"] == param_count(r["k"], r["d"])


@pytest.mark.parametrize("task,a,b,expected", [
    ("add2", "1011", "111", "10010"), ("add10", "999", "1", "1000"),
    ("mult2", "1101", "1011", "10001111"), ("mult10", "456", "12", "5472"),
])
def test_solve_json(capsys, task, a, b, expected):
    code, out, _ = run(capsys, "solve", task, a, b, "--json")
    report = json.loads(out)
    assert code == 0
    assert {k: report[k] for k in ("task", "a", "b", "result", "correct")} == \
        {"task": task, "a": a, "b": b, "result": expected, "correct": True}
    assert report["steps"] > 0


def test_solve_random_and_operand_file(capsys, tmp_path):
    code, out, _ = run(capsys, "solve", "add10", "--random", "300", "--seed", "4", "--json")
    report = json.loads(out)
    assert code == 0 and report["correct"] and len(report["a"]) == 300
    (tmp_path / "a.txt").write_text(report["a"] + "\n")
    code, out, _ = run(capsys, "solve", "add10", f"@{tmp_path / 'a.txt'}", report["b"], "--json")
    assert json.loads(out)["result"] == report["result"]


def test_solve_show_renders_grid(capsys):
    code, out, _ = run(capsys, "solve", "mult10", "456", "12", "--show")
    assert code == 0 and "5  4  7  2" in out and "correct" in out


@pytest.mark.parametrize("argv,fragment", [
    (["solve", "nope", "1", "1"], "unknown task 'nope'"),
    (["solve", "add2", "102", "1"], "not a digit in base 2"),
    (["solve", "add10", "12a", "1"], "not a digit in base 10"),
    (["solve", "add10", "", "1"], "empty"),
    (["solve", "add10", "-5", "3"], "negative"),
    (["solve", "mult10", "7", "-12"], "negative"),
    (["solve", "add10", "1"], "operands"),
    (["solve", "add10", "@/nonexistent/digits.txt", "1"], "cannot read operand file"),
    (["data", "nope", "--out", "x.zip"], "unknown task"),
    (["data", "add2", "--samples", "0", "--out", "OUT"], "sample"),
    (["agent", "add2", "--out", "/nonexistent/dir/agent.json"], "does not exist"),
    (["data", "add2", "--out", "/nonexistent/dir/d.zip"], "does not exist"),
    (["solve", "add2", "1", "1", "--bogus-flag"], ""),
])
def test_bad_input_is_one_line_exit_2(capsys, tmp_path, argv, fragment):
    argv = [str(tmp_path / "d.zip") if a == "OUT" else a for a in argv]
    code, _, err = run(capsys, *argv)
    assert_one_line_error(code, err, fragment)


def test_damaged_dataset_rejected(capsys, tmp_path):
    path = tmp_path / "d.pto.zip"
    assert run(capsys, "data", "add2", "--samples", "5", "--out", str(path))[0] == 0
    path.write_bytes(path.read_bytes()[:100])
    code, _, err = run(capsys, "data", "--inspect", str(path))
    assert_one_line_error(code, err, "d.pto.zip")


def test_existing_output_is_not_overwritten(capsys, tmp_path):
    path = tmp_path / "keep.json"
    path.write_text("precious")
    for argv in (["agent", "add2", "--out", str(path)],
                 ["data", "add2", "--samples", "3", "--out", str(path)]):
        code, _, err = run(capsys, *argv)
        assert_one_line_error(code, err, "already exists")
        assert path.read_text() == "precious"
    code, _, err = run(capsys, "agent", "add2", "--out", str(path), "--force")
    assert_one_line_error(code, err, "not written by dfst")  # --force replaces only dfst's own files
    assert path.read_text() == "precious"
    ours = tmp_path / "ours.json"
    assert run(capsys, "agent", "mult2", "--out", str(ours))[0] == 0
    assert run(capsys, "agent", "add2", "--out", str(ours), "--force")[0] == 0
    assert json.loads(ours.read_text())["name"] == "add2"


def test_data_same_seed_same_bytes(capsys, tmp_path):
    paths = [tmp_path / f"{i}.pto.zip" for i in range(3)]
    for path, seed in zip(paths, ("7", "7", "8")):
        assert run(capsys, "data", "mult2", "--samples", "6", "--max-digits", "3", "--seed", seed,
                   "--out", str(path), "--json")[0] == 0
    assert paths[0].read_bytes() == paths[1].read_bytes() != paths[2].read_bytes()
    code, out, _ = run(capsys, "data", "--inspect", str(paths[0]), "--json")
    assert json.loads(out)["samples"] == 6


def test_modified_agent_runs_on_task_layout(capsys, tmp_path):
    path = tmp_path / "agent.json"
    assert run(capsys, "agent", "add10", "--out", str(path))[0] == 0
    data = json.loads(path.read_text())
    for rule in data["rules"]:  # break the adder: 1 + 1 now writes 3
        if rule["state"] == "sum1" and rule["read"] == "1":
            rule["write"] = "3"
    path.write_text(json.dumps(data))
    code, out, _ = run(capsys, "solve", "--agent", str(path), "add10", "1", "1", "--json")
    assert code == 1 and json.loads(out)["result"] == "3" and not json.loads(out)["correct"]  # WRONG: exit 1
    data["rules"].append(dict(data["rules"][0]))
    path.write_text(json.dumps(data))
    code, _, err = run(capsys, "solve", "--agent", str(path), "add10", "1", "1")
    assert_one_line_error(code, err, "two rules")


def test_the_cli_starts_without_torch():
    """`dfst --help`, `--version` and every one-line refusal answer in a second: torch (~2 s to
    import) is loaded only by the commands that use it."""
    import subprocess
    import sys

    code = "import sys, dfst.cli; sys.exit('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], timeout=120).returncode == 0
