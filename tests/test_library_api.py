"""What the thin CLI calls is importable and works without it: solve, data, coverage, bench."""

from __future__ import annotations

import pytest

from dfst.data import inspect_dataset, record_dataset_file
from dfst.data.cover_search import minimal_report
from dfst.data.coverage import coverage_report, file_instances
from dfst.data.samplers import check_coverage_values, sampled_instances
from dfst.errors import DfstError
from dfst.tasks import TASKS
from dfst.tasks.solve import choose_instance, solve, task_agent, task_summaries

GiB = 1 << 30


def test_solve_checks_the_answer_against_python():
    task = TASKS["add10"]
    solution = solve(task, choose_instance(task, "999", "1", max_memory=GiB))
    assert solution.correct and solution.result == "1000"
    assert solution.to_dict()["outcome"] == "halted"
    random = choose_instance(task, None, None, random_digits=5, seed=2, max_memory=GiB)
    assert random == task.random_instances(5, 1, 2)[0]
    with pytest.raises(DfstError, match="give two operands"):
        choose_instance(task, "1", None, max_memory=GiB)
    with pytest.raises(DfstError, match="max-memory"):
        choose_instance(task, "1", "2", max_memory=1)


def test_task_summaries_and_agent(tmp_path):
    assert [r["task"] for r in task_summaries()] == list(TASKS)
    assert task_agent(TASKS["add2"]) is TASKS["add2"].agent
    from dfst.automata import save_transducer

    save_transducer(TASKS["add10"].agent, tmp_path / "a.json")
    with pytest.raises(DfstError, match="does not match"):
        task_agent(TASKS["add2"], tmp_path / "a.json")


def test_dataset_file_round_trip_and_coverage(tmp_path):
    task, path, seen = TASKS["add2"], tmp_path / "d.pto.zip", []
    summary = record_dataset_file(task, 4, 3, 0, path, progress=seen.append)
    assert seen == [0, 1, 2, 3, 4] and summary["file"] == str(path)
    assert inspect_dataset(path) == {k: v for k, v in summary.items() if k != "file"} | {
        "expert_runs_checked": True}
    instances, source = file_instances(task, path)
    assert source == {"data": str(path)} and len(instances) == 4
    report = coverage_report(task, instances)
    assert report["covered"] + len(report["missing"]) == report["rules"]
    drawn, _ = sampled_instances(task, 4, 3, 0)
    assert coverage_report(task, drawn)["instances"] == 4


def test_minimal_report_and_value_checks():
    report = minimal_report(TASKS["add2"], 2)
    assert report["reachable"] == report["rules"] - len(report["unreachable"])
    assert report["irredundant"] and report["size"] == len(report["instances"])
    with pytest.raises(DfstError, match="--max-digits"):
        check_coverage_values(0, None, 0, 0, "uniform")
    with pytest.raises(DfstError, match="--sampler"):
        check_coverage_values(3, 5, 0, 0, "nope")
