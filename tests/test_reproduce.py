"""`dfst reproduce`: trains and evaluates per seed, stores results `dfst table` reads, reuses them."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from cli_helpers import assert_one_line_error, run, run_json
from dfst.cli.reproduce import seed_plan
from dfst.errors import DfstError
from dfst.results import load_results
from dfst.tasks import TASKS, get_task
from dfst.train import TrainConfig
from dfst.train.recipes import PUBLISHED, RECIPES, TARGET_DIGITS, recipe

QUICK = ("--tasks", "add2", "--seeds", "1", "--iters", "30", "--restarts", "2", "--time-budget", "20")


SYSTEMS = ["DFST", "DFST (before fine-tuning)", "DFST (extracted)"]


def test_one_quick_seed_gives_rows_and_result_files(capsys, tmp_path):
    args = (*QUICK, "--runs", tmp_path / "runs", "--results", tmp_path / "results")
    rows = run_json(capsys, "reproduce", *args)
    assert sorted(r["system"] for r in rows) == SYSTEMS
    assert all(r["task"] == "add2" and r["seeds"] == 1 and r["samples"] == 20 for r in rows)
    stored = [r.to_dict() for r in load_results(tmp_path / "results")]
    assert sorted(r["system"] for r in stored) == SYSTEMS
    for r in stored:  # each model that exists was certified in plain mode, as it was evaluated
        assert r["key"]["eval"]["rescale"] is False and r["key"]["eval"]["certify"] is True
        if (tmp_path / "runs" / "add2" / "s0" / {"DFST": "model", "DFST (extracted)": "extracted"}.get(
                r["system"], "trained")).exists():
            assert r["details"]["certified"]["verdict"] in ("CERTIFIED", "COUNTEREXAMPLE", "INCONCLUSIVE")
    model = next(r for r in stored if r["system"] == "DFST")
    table = run_json(capsys, "table", "--results", tmp_path / "results")
    certified = {r["system"]: r["certified"] for r in rows}
    assert {r["system"]: r["certified"] for r in table} == certified  # dfst table counts the same seeds
    assert set(model["details"]["finetune"]) == {"d", "error", "cpu_seconds"}  # the phase's outcome
    assert all(r["robust_lg"] == row["robust_lg_median"] for r, row in zip(
        sorted(stored, key=lambda r: r["system"]), sorted(rows, key=lambda r: r["system"])))
    state = tmp_path / "runs" / "add2" / "s0" / "train_state.safetensors"
    before = state.stat().st_mtime_ns
    assert run_json(capsys, "reproduce", *args) == rows  # stored: nothing is trained again
    assert state.stat().st_mtime_ns == before


def test_progress_reports_training_then_each_model_of_the_seed(tmp_path):
    from dfst.studies.reproduce import reproduce

    seen = []
    reproduce({"add2": [0]}, tmp_path / "runs", tmp_path / "results", time_budget=5, certify=False,
              overrides={"iters": 20, "restarts": 1, "d": 6, "finetune_centres": 20},  # a short phase
              progress=lambda *got: seen.append(got))
    assert {label for label, _ in seen} == {"add2 seed 0"}
    iterations = [r["iteration"] for _, r in seen if "iteration" in r and "phase" not in r]
    assert iterations == list(range(1, 21))
    stages = [r["stage"] for _, r in seen if "stage" in r]
    assert stages == [f"evaluating DFST{s}" for s in ("", " (before fine-tuning)", " (extracted)")]
    assert seen.index(("add2 seed 0", {"stage": stages[0]})) > max(
        i for i, (_, r) in enumerate(seen) if "iteration" in r)  # evaluation comes after training


def test_without_the_phase_and_certification_two_systems_and_no_certified_column(capsys, tmp_path):
    rows = run_json(capsys, "reproduce", *QUICK, "--no-finetune", "--no-certify", "--rescale",
                    "--runs", tmp_path / "runs", "--results", tmp_path / "results")
    assert sorted(r["system"] for r in rows) == ["DFST", "DFST (extracted)"]
    assert all(r["certified"] is None for r in rows)
    stored = [r.to_dict() for r in load_results(tmp_path / "results")]
    assert all("certified" not in r["details"] and r["key"]["eval"]["rescale"] for r in stored)
    assert not (tmp_path / "runs" / "add2" / "s0" / "trained").exists()


def _result(kind: str | None, digits: int | None = None, checker: str = "ok"):
    from dfst.results import Result

    verdict = {"all": "CERTIFIED", "bounded": "CERTIFIED", "none": "COUNTEREXAMPLE"}.get(kind)
    cert = {"verdict": verdict, "max_digits": digits, "checker": checker}
    details = {} if kind is None else {"certified": cert}
    return Result(system="DFST", task="add2", seed=0, samples=20, params=468, max_train_digits=3, robust_lg=0,
                  probabilistic_lg=0, train_seconds=1.0, hardware="cpu", details=details)


def test_certified_counts_sort_seeds_into_all_lengths_bounded_and_none():
    from dfst.results.certified import certified_counts, certified_text

    results = [_result("all"), _result("bounded", 444), _result("bounded", 738), _result("none"),
               _result("bounded", 999, checker="REJECTED: no"), _result("all", checker=None)]
    counts = certified_counts(results)
    assert counts == {"all": 1, "bounded": 2, "none": 3, "not_run": 0, "bounded_digits": [444, 738]}
    assert certified_text(counts) == "1 / 2 (444-738 digits) / 3"
    assert certified_counts([_result(None), _result(None)]) is None and certified_text(None) == "not run"
    assert certified_text(certified_counts([_result("bounded", 50)])) == "0 / 1 (50 digits) / 0"
    # a seed never certified is not counted as a seed that failed certification
    mixed = certified_counts([_result("all"), _result("all"), _result(None)])
    assert (mixed["none"], mixed["not_run"]) == (0, 1) and certified_text(mixed) == "2 / 0 / 0 (1 not run)"


def test_readme_block_is_rewritten_and_nothing_else(capsys, tmp_path):
    readme = tmp_path / "README.md"
    head, tail = "# title\n\nsome text\n<!-- reproduce:start -->\n", "<!-- reproduce:end -->\nend\n"
    readme.write_text(head + "old table\n" + tail)
    run_json(capsys, "reproduce", *QUICK, "--runs", tmp_path / "runs", "--results", tmp_path / "res",
             "--readme", readme)
    text = readme.read_text()
    assert text.startswith(head) and text.endswith(tail) and "old table" not in text
    assert "| add2 | DFST |" in text


@pytest.mark.parametrize("argv, fragment", [
    (("--tasks", "add3"), "unknown task(s) add3"),
    (("--tasks", ","), "(none given)"),
    (("--seeds", "0"), "--seeds >= 1"),
    (("--tasks", "add2:0"), "TASK:N with N >= 1"),
    (("--tasks", "add2:5-3"), "TASK:A-B with A <= B"),
    (("--tasks", "add2:-3"), "'add2:-3'"),
    (("--tasks", "add2:x"), "'add2:x'"),
    (("--tasks", "add3:2"), "unknown task(s) add3"),
])
def test_bad_options_are_one_line_errors(capsys, tmp_path, argv, fragment):
    code, _, err = run(capsys, "reproduce", *argv, "--runs", tmp_path / "r", "--results", tmp_path / "s")
    assert_one_line_error(code, err, fragment)


@pytest.mark.parametrize("task", ["add2", "add10", "mult2", "mult10"])
def test_reproduce_trains_what_dfst_train_task_trains(task):
    from dfst.studies.seeds import run_config
    from dfst.train.recipes import configure

    cfg, _ = configure(task, {"seed": 7}, {"seed"})
    assert run_config(task, 7) == cfg  # one run directory, whichever command made it
    assert run_config(task, 7, {"iters": 5}) == replace(cfg, iters=5)


def test_task_seed_counts_override_seeds():
    plan = seed_plan("add2, mult10:2,mult2,add10:7-9", seeds=3, first_seed=4)
    assert plan == {"add2": [4, 5, 6], "mult10": [4, 5], "mult2": [4, 5, 6], "add10": [7, 8, 9]}
    assert seed_plan("add2:3-3", seeds=10, first_seed=0) == {"add2": [3]}


def test_recipes_cover_every_task_and_keep_the_issue_budgets():
    budgets = {"add2": (20, 3), "add10": (225, 3), "mult2": (750, 5), "mult10": (10_000, 5)}  # at most
    assert set(RECIPES) == set(TARGET_DIGITS) == set(TASKS)
    # 10^5 digits for the linear tasks, 10^4 for the quadratic sort2 and dyck, 1,000 for the others
    assert {TARGET_DIGITS[t] for t in ("add2", "add10", "sub2", "sub10", "parity2")} == {100_000}
    assert TARGET_DIGITS["sort2"] == TARGET_DIGITS["dyck"] == 10_000
    assert {TARGET_DIGITS[t] for t in set(RECIPES) - {"add2", "add10", "sub2", "sub10", "parity2", "sort2",
                                                      "dyck"}} == {1000}
    for task, (samples, digits) in budgets.items():
        cfg = recipe(task, seed=4)
        assert (cfg.task, cfg.seed) == (task, 4) and cfg.samples <= samples and cfg.max_digits <= digits
    published = TrainConfig(**PUBLISHED)
    assert published.init == "identity" and published.noise == 0 and published.restarts == 1


def test_the_d_column_says_where_fine_tuning_grew_the_model():
    from dfst.studies.reproduce import display, summary_rows

    results = [_result(None) for _ in range(3)]
    for r, grown in zip(results, ([19, 21], [19, 19], [19, 22])):
        phase = {"d": grown, "error": None, "cpu_seconds": 1.0}
        r.details.update(d=19, first_failing_digits=0, finetune=phase)
    assert display(summary_rows(results)[0])["d"] == "19 (grown to 21-22)"
    results[0].details["finetune"]["d"] = [19, 19]
    results[2].details["finetune"] = {"d": None, "error": "no automaton", "cpu_seconds": 0.0}
    assert display(summary_rows(results)[0])["d"] == "19"


def test_the_params_column_spans_the_seeds_as_the_d_column_does():
    from dataclasses import replace

    from dfst.studies.reproduce import display, summary_rows

    results = [replace(_result(None), params=params) for params in (4634, 8568, 4634)]
    for r, d in zip(results, (14, 21, 14)):
        r.details.update(d=d, first_failing_digits=0)
    shown = display(summary_rows(results)[0])
    assert (shown["d"], shown["params"]) == ("14-21", "4,634-8,568")
    assert display(summary_rows(results[::2])[0])["params"] == "4,634"


def test_a_reproduce_command_is_planned_before_any_training(tmp_path):
    from dfst.studies.reproduce import plan_reproduce

    plan = plan_reproduce("add2:2,mult2:3-4", iters=50, finetune=False)
    assert plan.seeds == {"add2": [0, 1], "mult2": [3, 4]} and plan.agent_tasks == []
    assert plan.overrides == {"iters": 50, "finetune": False}
    with pytest.raises(DfstError, match="exclude each other"):
        plan_reproduce("add2", rerun=True, accept_stored=True)
    with pytest.raises(DfstError, match="--iters must be >= 1"):
        plan_reproduce("add2", iters=0)
    agent = tmp_path / "expert.json"
    agent.write_text(json.dumps(get_task("add2").agent.to_dict()))
    with_agent = plan_reproduce("add2:1", agent_file=agent)
    assert [t.name for t in with_agent.agent_tasks] == ["add2"]
    assert with_agent.overrides["agent"] == str(agent)


def test_every_dfst_seed_short_of_its_target_is_listed_with_its_first_failing_instance():
    from dfst.studies.reproduce import markdown, summary_rows

    failing_level = {"digits": 100, "robust": False, "failures": [
        {"name": "carry_chain", "digits_a": 100, "digits_b": 1, "verdict": "wrong_answer"},
        {"name": "max_plus_max", "digits_a": 100, "digits_b": 100, "verdict": "wrong_answer"}]}
    results = [replace(_result(None), seed=seed, robust_lg=lg, levels=levels) for seed, lg, levels in (
        (0, TARGET_DIGITS["add2"], [{"digits": 10, "robust": True}]),
        (1, 10, [{"digits": 10, "robust": True}, failing_level]),
        (2, 1000, [{"digits": 1000, "robust": True}]))]  # testing stopped short: no level failed
    for r, stop in zip(results, ("max_digits", "failure", "time_budget")):
        r.details.update(d=6, first_failing_digits=0, stopped_by=stop)
    before = [replace(r, system="DFST (before fine-tuning)") for r in results]  # never listed
    rows = summary_rows(results + before)
    assert [f["seed"] for f in rows[0]["failures"]] == [1, 2] and rows[1]["failures"] == []
    text = markdown(rows)
    assert "- add2 seed 1 (DFST): fails at 100 digits on carry_chain (100 x 1 digits): wrong_answer" in text
    assert "- add2 seed 2 (DFST): testing stopped before the target (time_budget)" in text
    assert "2 seeds not robust at the target" in text and "seed 0" not in text


def test_a_named_block_is_rewritten_and_the_readme_block_left_alone(capsys, tmp_path):
    from dfst.studies.reproduce import MARK_START, summary_rows, write_readme

    page = tmp_path / "tables.md"
    page.write_text(f"{MARK_START}\nold\n<!-- reproduce:end -->\n<!-- reproduce:fresh:start -->\nold\n"
                    "<!-- reproduce:fresh:end -->\n")
    result = replace(_result(None), robust_lg=TARGET_DIGITS["add2"])
    result.details.update(d=6, first_failing_digits=0)
    write_readme(page, summary_rows([result]), "fresh")
    first, second = page.read_text().split("<!-- reproduce:fresh:start -->")
    assert "old" in first and "old" not in second and "| add2 | DFST | 1 |" in second
    (tmp_path / "other.md").write_text("no marks\n")
    for argv, fragment in ((("--block", "fresh"), "--block names a block"),
                           (("--block", "a b", "--readme", page), "--block 'a b'"),
                           (("--block", "other", "--readme", page), "no <!-- reproduce:other:start -->"),
                           (("--readme", tmp_path / "other.md"), "no <!-- reproduce:start -->")):
        code, _, err = run(capsys, "reproduce", *argv, "--runs", tmp_path / "r", "--results", tmp_path / "s")
        assert_one_line_error(code, err, fragment)
    assert not (tmp_path / "r").exists() and not (tmp_path / "s").exists()


def test_every_stored_result_was_scored_under_the_protocol_its_table_claims():
    """The tables say "robust at target", "held out" and "hard set N": a stored result scored with
    another target, hard set, h mode or without the held-out split would make that line untrue (mult10
    seeds scored at 300 digits once sat under a 1,000-digit heading)."""
    from dfst.results import load_results
    from dfst.tasks.hard import hard_set_version
    from dfst.train.recipes import TARGET_DIGITS

    stored = load_results(Path(__file__).resolve().parents[1] / "results" / "dfst")
    assert len(stored) > 100
    for result in stored:
        protocol = (result.key or {}).get("eval") or {}
        where = f"{result.task} seed {result.seed} {result.system}"
        assert protocol.get("target_digits") == TARGET_DIGITS[result.task], where
        assert protocol.get("hard_set") == hard_set_version(result.task), where
        assert protocol.get("held_out") is True and protocol.get("rescale") is False, where
        assert result.details["target_digits"] == TARGET_DIGITS[result.task], where
