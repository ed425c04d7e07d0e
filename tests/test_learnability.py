"""`dfst bench learnability`: random agents drawn as the doc says, the table counted right, results
files written only where dfst may, and one real cell (slow: a training run)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cli_helpers import assert_one_line_error, run
from dfst.errors import DfstError
from dfst.grid.rollout import run_table
from dfst.grid.world import Outcome
from dfst.studies.learnability import (
    check_results_directory,
    draw_agent,
    learnability_report,
    random_table,
    success_table,
)


def test_random_tables_are_seeded():
    first = random_table(np.random.default_rng(3), 4)
    assert first.rules == random_table(np.random.default_rng(3), 4).rules
    assert first.rules != random_table(np.random.default_rng(4), 4).rules
    assert first.d == 5 and len(first.rules) == 12 and first.alphabet == ("0", "1", "_")


@pytest.mark.parametrize("d", [2, 4])
def test_a_drawn_agent_halts_on_every_short_string_and_uses_every_state(d):
    task = draw_agent(np.random.default_rng([0, d]), d, (10, 30))
    assert task.agent.d == d + 1 and task.reference == "agent"
    states = set()
    for inst in task.short_instances(5) + task.random_instances(30, 5, seed=1):
        run = run_table(task.agent, task.layout(inst), task.max_steps(inst), record=True)
        assert run.outcome == Outcome.HALTED
        nxt, _, _ = task.agent.tables()
        q = 0
        for read in run.trace[:, 0]:
            states.add(q)
            q = int(nxt[q, int(read)])
    assert states == set(range(d))


def test_the_table_counts_successes_per_states_and_samples():
    cells = [{"d": 2, "samples": 5, "dfst": {"robust": True}, "rpni": {"robust": False}},
             {"d": 2, "samples": 5, "dfst": {"robust": True}, "rpni": {"robust": True}},
             {"d": 3, "samples": 5, "dfst": {"robust": False}, "rpni": {"robust": False}}]
    assert success_table(cells) == [{"d": 2, "samples": 5, "agents": 2, "dfst": 2, "rpni": 1},
                                     {"d": 3, "samples": 5, "agents": 1, "dfst": 0, "rpni": 0}]


def test_a_foreign_file_in_the_results_directory_is_refused(tmp_path):
    (tmp_path / "learnability.json").write_text('{"mine": 1}')
    with pytest.raises(DfstError, match="not written by dfst"):
        check_results_directory(tmp_path)


def test_bad_grid_is_one_line_error(capsys, tmp_path):
    code, _, err = run(capsys, "bench", "learnability", "--states", "0", "--out", tmp_path)
    assert_one_line_error(code, err, "--states")


@pytest.mark.slow
def test_one_cell_end_to_end(tmp_path):
    report = learnability_report(tmp_path / "runs", states=(2,), samples=(20,), agents=1)
    cell = report["cells"][0]
    assert report["table"] == success_table(report["cells"])
    assert cell["target_digits"] == 300 and set(cell) >= {"dfst", "rpni"}
    stored = json.loads((tmp_path / "runs" / "d2" / "agent0" / "s20" / "agent.json").read_text())
    assert stored["format"] == "dfst-agent" and len(stored["states"]) == 3


def test_a_foreign_agent_file_in_the_runs_is_refused_before_training(capsys, tmp_path):
    mine = tmp_path / "d2" / "agent0" / "s5" / "agent.json"
    mine.parent.mkdir(parents=True)
    mine.write_text('{"mine": 1}')
    code, _, err = run(capsys, "bench", "learnability", "--states", "2", "--samples", "5", "--agents", "1",
                       "--out", tmp_path)
    assert_one_line_error(code, err, "not written by dfst")
    assert mine.read_text() == '{"mine": 1}' and not (mine.parent / "run").exists()
