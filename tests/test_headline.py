"""README's headline (`dfst table --headline`): the paper's Table 1 beside each machine a run delivers,
counted from the stored results, never from a hard-coded figure."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from cli_helpers import run
from dfst.results import Result, save_result
from dfst.studies.headline import MACHINES, MARK_END, MARK_START, PAPER, PROVED, headline_rows, markdown
from dfst.train.recipes import TARGET_DIGITS

LEVEL = {"digits": 10, "instances": 12, "exact": 12, "robust": True}


def stored(system: str, task: str, seed: int, robust: int, traces: dict | None = None) -> Result:
    details = {"extracted": {"states": 9, "rules": 24}} | ({"traces": traces} if traces else {})
    return Result(system=system, task=task, seed=seed, samples=20, params=258, max_train_digits=3,
                  robust_lg=robust, probabilistic_lg=robust, train_seconds=1.0, hardware="cpu",
                  levels=[LEVEL], details=details)


LENGTHS = st.lists(st.sampled_from([0, 10, 1000, 100_000]), min_size=1, max_size=6)


@settings(max_examples=30, deadline=None)
@given(LENGTHS, st.sampled_from(list(PAPER)))
def test_each_machine_row_counts_its_own_seeds(lgs, task):
    results = [stored(system, task, seed, lg if system != "DFST (before fine-tuning)" else 0)
               for seed, lg in enumerate(lgs) for system in MACHINES]
    rows = [r for r in headline_rows(results) if r["task"] == task]
    assert rows[0]["what made the number"].startswith("the paper")
    assert f"{PAPER[task][3]:,}" in rows[0]["robust LG (median, best)"]
    assert [r["what made the number"] for r in rows[1:]] == [f"dfst: {w}" for w in MACHINES.values()]
    target = TARGET_DIGITS[task]
    trained, extracted, refitted = rows[1:]
    assert trained["seeds robust at the target"] == f"0 of {len(lgs)} at {target:,}"
    robust = sum(lg >= target for lg in lgs)
    assert extracted["seeds robust at the target"] == f"{robust} of {len(lgs)} at {target:,}"
    assert refitted["robust LG (median, best)"].endswith(f"{max(lgs):,}")
    assert extracted["size"] == "9 states, 24 rules"


def test_a_counterexample_is_told_apart_from_a_check_that_decided_nothing():
    verdicts = [{"verdict": "CERTIFIED", "max_digits": None, "checker": "ok"},
                {"verdict": "CERTIFIED", "max_digits": 441, "checker": "ok"},
                {"verdict": "COUNTEREXAMPLE", "max_digits": None},
                {"verdict": "INCONCLUSIVE", "max_digits": None},
                {"verdict": "INCONCLUSIVE", "max_digits": None}, None]
    runs = [stored("DFST", "add2", seed, 10) for seed in range(len(verdicts))]
    for result, verdict in zip(runs, verdicts):
        result.details["certified"] = verdict
    runs[-1].details.pop("certified")
    row = [r for r in headline_rows(runs) if r["what made the number"].startswith("dfst")][0]
    assert row[PROVED] == "1 / 1 (441 digits) / 1 / 2 (1 not run)"


def test_expert_runs_read_come_from_the_results_and_say_unknown_otherwise():
    traces = {"kept": {"runs": 20, "distinct": 18, "digits": [1, 3]},
              "validation": {"runs": 158, "digits": [4, 6]}, "total": random.randint(200, 5000)}
    known = [stored("DFST", "add2", s, 10, traces) for s in range(2)]
    row = [r for r in headline_rows(known) if r["what made the number"].startswith("dfst")][0]
    assert row["expert runs read (digits)"] == f"{traces['total']:,} (1-6)"
    unknown = [stored("DFST", "add2", 0, 10, traces), stored("DFST", "add2", 1, 10)]
    row = [r for r in headline_rows(unknown) if r["what made the number"].startswith("dfst")][0]
    assert row["expert runs read (digits)"] == "-"


def test_the_readme_block_is_rewritten_and_a_readme_without_marks_is_refused(tmp_path, capsys):
    results = tmp_path / "results"
    results.mkdir()
    for seed in range(2):
        save_result(stored("DFST", "add2", seed, 100_000), results / f"add2-s{seed}.json")
    readme = tmp_path / "README.md"
    readme.write_text(f"# top\n{MARK_START}\nold\n{MARK_END}\ntail\n")
    code, _, err = run(capsys, "table", "--headline", "--results", results, "--readme", readme, "--markdown")
    assert code == 0, err
    text = readme.read_text()
    assert "old" not in text and text.startswith("# top\n") and text.endswith("tail\n")
    assert markdown(headline_rows([stored("DFST", "add2", s, 100_000) for s in range(2)])) in text
    bare = tmp_path / "BARE.md"
    bare.write_text("no marks\n")
    code, _, err = run(capsys, "table", "--headline", "--results", results, "--readme", bare)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert bare.read_text() == "no marks\n"
