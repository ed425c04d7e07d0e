"""Tasks of your own (docs/tasks.md): the example in examples/tasks/ through the commands, the
contract checked at load, and the three ways in (a file, DFST_TASKS_FILE, an entry point)."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest

from cli_helpers import assert_one_line_error, run, run_json
from dfst.errors import DfstError
from dfst.tasks import TASKS
from dfst.tasks.user import contract_problem, load_entry_points, load_tasks_file, register_task

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "tasks" / "or2.py"


pytestmark = pytest.mark.usefixtures("task_registry")  # the CLI registers tasks in this process


@pytest.fixture
def or2():
    load_tasks_file(EXAMPLE)
    return TASKS["or2"]


def test_the_example_agrees_with_python_on_random_instances(or2):
    rng = random.Random(0)
    for _ in range(200):
        a, b = (format(rng.getrandbits(rng.randint(1, 100)) | 1, "b") for _ in range(2))
        instance = or2.check(a, b)
        from dfst.tasks.solve import solve

        assert solve(or2, instance).result == format(int(a, 2) | int(b, 2), "b")


def test_the_example_goes_through_solve_compile_certify_and_eval(tmp_path, capsys):
    tasks = ("--tasks-file", EXAMPLE)
    solved = run_json(capsys, *tasks, "solve", "or2", "--random", "200")
    assert solved["correct"] and len(solved["a"]) == 200
    run_json(capsys, *tasks, "compile", "or2", "--out", tmp_path / "or2")
    assert run_json(capsys, *tasks, "certify", tmp_path / "or2")["verdict"] == "CERTIFIED"
    report = run_json(capsys, *tasks, "eval", tmp_path / "or2", "--digits", "10,1000")
    assert report["robust_max_digits"] == 1000
    del TASKS["or2"]  # as in a new process: not registered without the file
    code, _, err = run(capsys, "solve", "or2", "1", "1")
    assert_one_line_error(code, err, "unknown task 'or2'")


def test_the_environment_variable_names_a_tasks_file(capsys, monkeypatch):
    monkeypatch.setenv("DFST_TASKS_FILE", str(EXAMPLE))
    assert run_json(capsys, "solve", "or2", "110", "11")["result"] == "111"


@pytest.mark.parametrize("change, fragment", [
    (dict(answer=lambda a, b, base: format(int(a, 2) & int(b, 2), "b")), "the expert answers"),
    (dict(draw=lambda a, b, base: dataclasses.replace(TASKS["add2"].draw(a, b, base), head=(99, 0))),
     "the head (99, 0) is off"),
    (dict(step_bound=lambda n, m, base: 2), "does not halt within the step bound"),
    (dict(name="or-2"), "letters, digits and underscores"),
])
def test_a_task_that_breaks_the_contract_is_refused_with_the_reason(or2, change, fragment):
    broken = dataclasses.replace(or2, name=change.pop("name", "or2b"), **change)
    assert fragment in contract_problem(broken)
    with pytest.raises(DfstError, match="refused"):
        register_task(broken)


def test_a_bad_tasks_file_is_a_one_line_error(tmp_path, capsys):
    for text, fragment in (("raise ValueError('oops')", "failed to run: ValueError: oops"),
                           ("x = 1", "defines no TASKS list")):
        path = tmp_path / "tasks.py"
        path.write_text(text)
        code, _, err = run(capsys, "--tasks-file", path, "tasks")
        assert_one_line_error(code, err, fragment)
    code, _, err = run(capsys, "--tasks-file", tmp_path / "missing.py", "tasks")
    assert_one_line_error(code, err, "does not exist")


def test_an_entry_point_registers_its_tasks(or2, monkeypatch):
    import importlib.metadata

    import dfst.tasks.user as user

    class Point:
        name, value = "mine", "mine:tasks"

        def load(self):
            return lambda: [dataclasses.replace(or2, name="or2_plugin")]

    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda group: [Point()] if group == "dfst.tasks" else [])
    monkeypatch.setattr(user, "_entry_points_loaded", False)
    assert load_entry_points() == ["or2_plugin"] and load_entry_points() == []
    assert TASKS["or2_plugin"].expected(TASKS["or2_plugin"].check("10", "1")) == "11"
