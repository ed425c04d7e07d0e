"""`dfst bench data-needs`: the table counted right, a real cell (training cut short: the check is the
bookkeeping, not the learning), cells reused on a re-run, bad choices and foreign files refused."""

from __future__ import annotations

import json
import os
from dataclasses import replace

import pytest

import dfst.studies.data_needs as needs
import dfst.studies.seeds as seeds
from cli_helpers import assert_one_line_error, run
from dfst.errors import DfstError


def cell(sampler: str, count: int, seed: int, read: int, won: dict, missing: int = 1) -> dict:
    return {"task": "add2", "sampler": sampler, "count": count, "seed": seed, "read": read,
            "train_cpu_seconds": 1.0, "learners": {name: {"robust": ok} for name, ok in won.items()},
            "rules_missing": missing}


def test_the_table_counts_each_learners_seeds_per_point():
    cells = [cell("uniform", 5, 0, 163, {"default": True, "rpni": False}),
             cell("uniform", 5, 1, 165, {"default": False, "rpni": False}),
             cell("contexts", 5, 0, 4195, {"default": True, "rpni": True})]
    rows = needs.needs_table(cells)
    assert [(r["sampler"], r["seeds"]) for r in rows] == [("contexts", 1), ("uniform", 2)]
    uniform = rows[1]
    assert uniform["default"] == "1 of 2" and uniform["rpni"] == "0 of 2" and uniform["trained"] == "-"
    assert uniform["traces read (median)"] == 164


def test_the_table_names_the_learners_that_fail_where_every_rule_was_seen():
    cells = [cell("uniform", 40, 0, 200, {"default": True, "trained": False, "rpni": False}, missing=0),
             cell("uniform", 40, 1, 200, {"default": False, "trained": False, "rpni": False}, missing=2)]
    [row] = needs.needs_table(cells)
    assert row["seeds with every rule seen"] == 1 and row["fails with every rule seen"] == "trained 1, rpni 1"


@pytest.fixture
def short_training(monkeypatch):
    recipe = seeds.run_config
    monkeypatch.setattr(seeds, "run_config", lambda task, seed, overrides: replace(
        recipe(task, seed, overrides), iters=60, restarts=2, finetune=False))


def test_a_cell_scores_every_learner_on_its_own_data_and_is_reused(tmp_path, short_training, monkeypatch):
    import dfst.baselines.rpni as rpni
    from dfst.data.pto import load_dataset

    held_out, scored = [], rpni.evaluate_weights
    monkeypatch.setattr(rpni, "evaluate_weights", lambda *a: held_out.append(set(a[4])) or scored(*a))
    cells = needs.data_needs(tmp_path, ("add2",), (6,), ("uniform",), (0,), ("default", "trained", "rpni"))
    run = tmp_path / "runs" / "add2-uniform-n6-s0"
    read = {*load_dataset(run / "data.pto.zip").operands, *load_dataset(run / "validation.pto.zip").operands}
    assert held_out and all(pairs == read for pairs in held_out)  # nothing the learner read is scored
    [found] = cells
    assert found["kept"] == 6 and found["traces"]["kept"]["runs"] == 6 and 0 <= found["rules_missing"] < 24
    assert found["read"] == found["traces"]["total"] == 6 + found["traces"]["validation"]["runs"]
    assert set(found["learners"]) == {"default", "trained", "rpni"}
    assert all(isinstance(s["robust"], bool) for s in found["learners"].values())
    monkeypatch.setattr(needs, "run_cell", lambda *a, **k: pytest.fail("a finished cell ran again"))
    again = needs.data_needs(tmp_path, ("add2",), (6,), ("uniform",), (0,), ("default", "trained", "rpni"))
    assert again == cells
    assert needs.all_cells(tmp_path) == cells  # the report's cells: every one under OUT/cells
    path = tmp_path / "cells" / "add2-uniform-n6-s0.json"
    older = json.loads(path.read_text())
    missing = older.pop("rules_missing")
    path.write_text(json.dumps(older))  # a cell written before the diagnosis: counted from its run
    assert needs.all_cells(tmp_path)[0]["rules_missing"] == missing
    report = needs.save_report(cells, tmp_path)
    assert report["table"] == needs.needs_table(cells) and (tmp_path / "data-needs-add2.png").stat().st_size
    shown = needs.shown_columns(report["table"])
    assert "edsm" not in shown and "rpni" in shown


def test_a_learner_a_stored_cell_lacks_is_scored_on_its_run_alone(tmp_path, short_training, monkeypatch):
    monkeypatch.setattr(needs, "POLICY_CONFIG", {"size": "small", "steps": 20, "eval_top": 10})
    [first] = needs.data_needs(tmp_path, ("add2",), (6,), ("uniform",), (0,), ("trained",))
    monkeypatch.setattr(needs, "run_cell", lambda *a, **k: pytest.fail("a finished cell trained again"))
    [grown] = needs.data_needs(tmp_path, ("add2",), (6,), ("uniform",), (0,), ("trained", "lstm-policy"))
    policy = grown["learners"]["lstm-policy"]
    assert grown["learners"]["trained"] == first["learners"]["trained"]
    assert policy["robust"] is False and policy["robust_max_digits"] < 10  # 20 steps learn no adder
    assert needs.all_cells(tmp_path) == [grown]  # written back: the report sees it
    (tmp_path / "runs" / "add2-uniform-n6-s0" / "data.pto.zip").unlink()
    with pytest.raises(DfstError, match="lacks gru-policy"):
        needs.data_needs(tmp_path, ("add2",), (6,), ("uniform",), (0,), ("gru-policy",))


def test_a_foreign_cell_file_is_refused_and_left_alone(tmp_path):
    (tmp_path / "cells").mkdir()
    foreign = tmp_path / "cells" / "add2-uniform-n6-s0.json"
    foreign.write_text('{"mine": 1}')
    with pytest.raises(DfstError, match="not a data-needs cell"):
        needs.data_needs(tmp_path, ("add2",), (6,), ("uniform",), (0,))
    assert foreign.read_text() == '{"mine": 1}'


@pytest.mark.parametrize("option", [("--learners", "default,oracle"), ("--samplers", "cover"),
                                    ("--counts", "0")])
def test_bad_choices_are_one_line_errors(tmp_path, capsys, option):
    code, out, err = run(capsys, "bench", "data-needs", "add2", *option, "--out", tmp_path / "dn")
    assert_one_line_error(code, err)
    assert not (tmp_path / "dn").exists()


def test_a_users_agent_is_the_expert_of_its_own_cells(tmp_path, short_training):
    from dfst.tasks import TASKS

    agent = dict(TASKS["add2"].agent.to_dict(), name="mine")
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(agent))
    [found] = needs.data_needs(tmp_path / "dn", ("add2",), (6,), ("uniform",), (0,), ("trained", "rpni"),
                               agent=path)
    assert found["task"] == "add2+mine" and found["agent"] == str(path)
    assert (tmp_path / "dn" / "cells" / "add2+mine-uniform-n6-s0.json").exists()
    config = json.loads((tmp_path / "dn" / "runs" / "add2+mine-uniform-n6-s0" / "config.json").read_text())
    assert config["train"]["agent"] == str(path) and config["data"]["summary"]["agent"] == "mine"


def test_a_bad_agent_is_refused_before_any_cell(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"states": []}')
    code, _, err = run(capsys, "bench", "data-needs", "add2", "--agent", bad, "--out", tmp_path / "dn")
    assert_one_line_error(code, err)
    assert not (tmp_path / "dn").exists()


@pytest.mark.parametrize("kind", ["user file", "link", "fifo"])
def test_a_report_path_dfst_may_not_replace_is_refused_before_any_cell(tmp_path, capsys, kind):
    out = tmp_path / "dn"
    out.mkdir()
    report = out / "data-needs.json"
    if kind == "user file":
        report.write_text('{"mine": 1}')
    elif kind == "link":
        report.symlink_to(tmp_path / "elsewhere.json")
    else:
        os.mkfifo(report)
    code, _, err = run(capsys, "bench", "data-needs", "add2", "--counts", "5", "--seeds", "0", "--out", out)
    assert_one_line_error(code, err)
    assert not (out / "cells").exists() and not (tmp_path / "elsewhere.json").exists()
    if kind == "user file":
        assert report.read_text() == '{"mine": 1}'


@pytest.mark.usefixtures("task_registry")
def test_a_task_of_your_own_trains_from_the_general_recipe(tmp_path, short_training):
    from pathlib import Path

    from dfst.tasks.user import load_tasks_file
    from dfst.train.recipes import GENERAL, training_recipe

    load_tasks_file(Path(__file__).resolve().parents[1] / "examples" / "tasks" / "or2.py")
    assert training_recipe("or2", 3) == replace(GENERAL, task="or2", seed=3)
    [found] = needs.data_needs(tmp_path, ("or2",), (6,), ("uniform",), (0,), ("trained",))
    assert found["task"] == "or2" and found["kept"] == 6 and set(found["learners"]) == {"trained"}
    saved = json.loads((tmp_path / "runs" / "or2-uniform-n6-s0" / "config.json").read_text())["train"]
    assert saved["task"] == "or2" and saved["samples"] == 6
