"""Held-out evaluation: no instance a model was trained on is ever scored as a test."""

from __future__ import annotations

import json

import numpy as np

from cli_helpers import run, run_json
from dfst.baselines.common import evaluate_predictor
from dfst.data.pto import load_dataset, record_dataset_file
from dfst.protocol.config import EvalConfig
from dfst.protocol.eval_files import held_out_of
from dfst.protocol.instances import HeldOut, level_instances, random_lengths
from dfst.tasks import get_task

ADD2, ADD10 = get_task("add2"), get_task("add10")


def pairs(instances) -> list[tuple[str, str]]:
    return [(i.a, i.b) for i in instances]


def test_with_no_training_pairs_the_set_is_the_protocols_own():
    cfg = EvalConfig(digits=(7,), random=25, seed=3)
    rng = np.random.default_rng(3 + 7)
    drawn = [ADD10.random_instance(rng, *random_lengths(ADD10, rng, 7, index)) for index in range(25)]
    held_out = HeldOut()
    assert pairs(level_instances(ADD10, 7, cfg, held_out)) == pairs(ADD10.hard_instances(7) + drawn)
    assert held_out.removed.get(7, 0) == 0
    assert [len(i.a) == len(i.b) == 7 for i in drawn] == [index % 2 == 0 for index in range(25)]


def test_training_pairs_are_left_out_of_the_hard_set_and_drawn_again_among_the_random():
    cfg = EvalConfig(digits=(5,), random=10)
    plain = level_instances(ADD10, 5, cfg)
    hard, random = plain[:len(ADD10.hard_instances(5))], plain[len(ADD10.hard_instances(5)):]
    trained = pairs(hard[:4]) + pairs(random[2:3])
    held_out = HeldOut(trained)
    kept = level_instances(ADD10, 5, cfg, held_out)
    assert not set(pairs(kept)) & set(trained)
    assert len(kept) == len(plain) - 4  # the hard set is 4 shorter; the random pairs are still 10
    assert held_out.removed[5] == 4 + 1
    kept_random = kept[len(hard) - 4:]
    assert pairs(kept_random[:2]) == pairs(random[:2]) and len(kept_random) == 10


def test_a_length_whose_every_pair_was_trained_on_has_no_random_pairs_left():
    every = [(a, b) for a in "01" for b in "01"]
    held_out = HeldOut(every)
    kept = level_instances(ADD2, 1, EvalConfig(digits=(1,), random=10), held_out)
    assert kept == [] and held_out.removed[1] == len(ADD2.hard_instances(1))


def test_a_baseline_is_never_scored_on_its_training_pairs():
    seen = []

    def predict(instances):
        seen.extend((i.a, i.b) for i in instances)
        return [ADD10.expected(i) for i in instances]

    trained = pairs(ADD10.hard_instances(3)[:5])
    scores = evaluate_predictor(ADD10, predict, (3,), random=10, trained_on=trained)
    assert not set(seen) & set(trained)
    assert scores["levels"][0]["excluded"] >= 5 and scores["robust_lg"] == 3


def fake_run(tmp_path, capsys):
    """A run directory as dfst train leaves one, with the expert's compiled weights as its model."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"format": "dfst-train-run", "version": 1}))
    (run / "summary.json").write_text(json.dumps({"task": "add2"}))
    record_dataset_file(ADD2, 12, 2, 0, run / "data.pto.zip")
    run_json(capsys, "compile", "add2", "--out", run / "model", "--json")
    return run


def test_dfst_eval_of_a_run_never_tests_the_runs_training_pairs(tmp_path, capsys):
    run = fake_run(tmp_path, capsys)
    trained = set(load_dataset(run / "data.pto.zip").operands)
    held_out, source = held_out_of(run / "model")
    assert held_out.pairs == trained and source == str(run / "data.pto.zip")
    report = run_json(capsys, "eval", run / "model", "--digits", "2", "--json")
    assert report["held_out"] == len(trained) and report["levels"][0]["excluded"] > 0
    bare = tmp_path / "bare"
    run_json(capsys, "compile", "add2", "--out", bare, "--json")
    report = run_json(capsys, "eval", bare, "--digits", "2", "--json")
    assert report["held_out_source"] is None and report["levels"][0]["excluded"] == 0
    report = run_json(capsys, "eval", bare, "--digits", "2", "--trained-on", run / "data.pto.zip", "--json")
    assert report["levels"][0]["excluded"] > 0


def test_dfst_score_never_scores_the_pairs_it_is_told_the_model_trained_on(tmp_path, capsys):
    trained = tmp_path / "train.jsonl"
    pairs = [(i.a, i.b) for i in ADD10.hard_instances(10)[:6]]
    trained.write_text("".join(json.dumps({"id": k, "a": a, "b": b}) + "\n"
                               for k, (a, b) in enumerate(pairs)))
    requests = tmp_path / "set.jsonl"
    run_json(capsys, "score", "add10", "--instances-out", requests, "--digits", "10", "--random", "5",
             "--trained-on", trained, "--json")
    sent = {(r["a"], r["b"]) for r in map(json.loads, requests.read_text().splitlines())}
    assert sent and not sent & set(pairs)
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"id": r["id"], "answer": str(int(r["a"]) + int(r["b"]))}) + "\n"
                               for r in map(json.loads, requests.read_text().splitlines())))
    result = run_json(capsys, "score", "add10", "--answers", answers, "--instances", requests,
                      "--digits", "10", "--random", "5", "--trained-on", trained, "--json")
    assert result["levels"][0]["excluded"] == 6 and result["robust_lg"] == 10
    trained.write_text('{"a": 5}\n')
    code, _, err = run(capsys, "score", "add10", "--instances-out", tmp_path / "x.jsonl",
                       "--trained-on", trained)
    assert code == 2 and "line 1" in err


def test_a_users_own_config_json_beside_a_checkpoint_is_not_a_run(tmp_path, capsys):
    (tmp_path / "config.json").write_text("not: json\n")
    run_json(capsys, "compile", "add2", "--out", tmp_path / "ck", "--json")
    report = run_json(capsys, "eval", tmp_path / "ck", "--digits", "5", "--json")
    assert report["held_out_source"] is None and (tmp_path / "config.json").read_text() == "not: json\n"


def test_a_runs_validation_ptos_are_held_out_of_its_tests_too(tmp_path, capsys):
    from dfst.data import save_dataset
    from dfst.train.validation import validation_set

    run = fake_run(tmp_path, capsys)
    validation = validation_set(ADD2, 3, 0)
    save_dataset(validation, run / "validation.pto.zip")
    held_out, _ = held_out_of(run / "model")
    assert held_out.pairs == set(load_dataset(run / "data.pto.zip").operands) | set(validation.operands)
    assert {max(len(a), len(b)) for a, b in validation.operands} == {4, 5, 6}  # past the training data


def test_a_test_only_family_is_scored_and_never_drawn_by_a_learner():
    """compare10's overturned tie runs: in the hard set the protocol scores at each length, in no
    sampler's pool and no validation set, so adding the family left every run's training data as it was."""
    from dataclasses import replace

    from dfst.data import SAMPLERS
    from dfst.data.coverage import candidate_instances
    from dfst.train.validation import validation_set

    task = get_task("compare10")
    before = replace(task, test_hard=None)
    family = {(i.a, i.b) for n in (3, 4, 5) for i in task.test_hard(n, task.base)}
    assert family <= {(i.a, i.b) for n in (3, 4, 5) for i in task.hard_instances(n)}
    family -= {(i.a, i.b) for n in (3, 4, 5) for i in task.pool_instances(n)}  # tie runs of 0s were there
    assert len(family) == 3 * 18
    pool = candidate_instances(task, 3, np.random.default_rng(0), 50)
    assert family.isdisjoint((i.a, i.b) for i in pool)
    assert pool == candidate_instances(before, 3, np.random.default_rng(0), 50)
    assert validation_set(task, 2, 0).operands == validation_set(before, 2, 0).operands
    assert family.isdisjoint(map(tuple, validation_set(task, 2, 0).operands))
    assert SAMPLERS["contexts"](task, 40, 3, 1).operands == SAMPLERS["contexts"](before, 40, 3, 1).operands
