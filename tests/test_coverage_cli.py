"""`dfst coverage`: listed rules agree with a replay of the expert; minimal covering sets really cover,
are irredundant and, where the pool is exhaustive, minimal (checked by brute force); one-line errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from cli_helpers import assert_one_line_error, run, run_json
from dfst.data import record_dataset, save_dataset
from dfst.data.cover_search import branch_and_bound, greedy_cover, prune
from dfst.data.coverage import rules_used
from dfst.grid.world import run_agent
from dfst.tasks import TASKS, Instance


def replayed_rules(task, pairs) -> set[tuple[str, str]]:
    """Rules used by the reference simulator's runs: the independent side of every check."""
    used = set()
    for a, b in pairs:
        inst = Instance(a, b)
        used |= set(run_agent(task.agent, task.layout(inst), task.max_steps(inst), record=True).visited)
    return used


def keys(rules: list[dict]) -> set[tuple[str, str]]:
    return {(r["state"], r["read"]) for r in rules}


@pytest.mark.parametrize("name,samples,digits,seed",
                         [("add2", 20, 3, 0), ("mult2", 5, 3, 1), ("add10", 30, 2, 2)])
def test_listed_rules_agree_with_a_replay_of_the_expert(capsys, name, samples, digits, seed):
    task = TASKS[name]
    report = run_json(capsys, "coverage", name, "--samples", samples, "--max-digits", digits, "--seed", seed)
    pairs = record_dataset(task, samples, digits, seed).operands
    want = replayed_rules(task, pairs)
    assert keys(report["used"]) == want and report["covered"] == len(want)
    assert keys(report["missing"]) == set(task.agent.rules) - want
    assert report["instances"] == samples and report["rules"] == len(task.agent.rules)


def test_data_file_gives_the_same_coverage_as_its_sampler(capsys, tmp_path):
    task, path = TASKS["mult2"], tmp_path / "m.pto.zip"
    save_dataset(record_dataset(task, 5, 3, 1), path)
    from_file = run_json(capsys, "coverage", "mult2", "--data", path)
    drawn = run_json(capsys, "coverage", "mult2", "--samples", 5, "--max-digits", 3, "--seed", 1)
    assert from_file["used"] == drawn["used"] and from_file["missing"] == drawn["missing"]
    assert from_file["missing"]  # five random products miss rules (leading zeros, for one)


def test_cover_sampler_misses_nothing(capsys):
    report = run_json(capsys, "coverage", "add10", "--samples", 225, "--max-digits", 3, "--sampler", "cover")
    assert report["missing"] == [] and report["covered"] == len(TASKS["add10"].agent.rules)


def test_human_output_lists_the_missing_rules(capsys):
    code, out, _ = run(capsys, "coverage", "add2", "--samples", 2, "--max-digits", 1, "--seed", 0)
    assert code == 0 and "never" in out and "rules never exercised" in out


@pytest.mark.parametrize("name,digits", [("add2", 3), ("mult2", 3), ("add2", 2)])
def test_minimal_set_covers_every_rule_is_irredundant_and_minimal(capsys, name, digits):
    task = TASKS[name]
    report = run_json(capsys, "coverage", name, "--minimal", "--max-digits", digits)
    chosen = report["instances"]
    assert all(len(x) <= digits for pair in chosen for x in pair)
    reachable = replayed_rules(task, exhaustive_pairs(task.base, digits))
    assert replayed_rules(task, chosen) == reachable and report["reachable"] == len(reachable)
    for i in range(len(chosen)):  # irredundant: without any one instance a rule is lost
        assert replayed_rules(task, chosen[:i] + chosen[i + 1:]) != reachable
    assert report["pool"]["exhaustive"] and report["proved_minimal"]
    assert not covers_with(task, digits, len(chosen) - 1, reachable)  # brute force: one fewer never covers


def exhaustive_pairs(base: int, digits: int) -> list[tuple[str, str]]:
    digits_of = "0123456789"[:base]
    strings = ["".join(s) for n in range(1, digits + 1) for s in itertools.product(digits_of, repeat=n)]
    return [(a, b) for a in strings for b in strings]


def covers_with(task, digits: int, size: int, target: set) -> bool:
    """Whether some `size` instances of at most `digits` digits cover `target` (subset-maximal sets only)."""
    sets = {frozenset(replayed_rules(task, [p])) for p in exhaustive_pairs(task.base, digits)}
    top = [s for s in sets if not any(s < t for t in sets)]
    return any(frozenset().union(*combo) >= target for combo in itertools.combinations(top, size))


def test_minimal_search_on_a_large_pool_is_irredundant_and_beats_the_published_size(capsys):
    task = TASKS["add10"]
    report = run_json(capsys, "coverage", "add10", "--minimal", "--max-digits", 2, "--pool", 200)
    chosen = report["instances"]
    assert replayed_rules(task, chosen) == set(task.agent.rules) - keys(report["unreachable"])
    assert report["irredundant"] and report["lower_bound"] <= report["size"] < report["published_samples"]


def brute_minimum(masks: list[int], target: int) -> int:
    for size in range(1, len(masks) + 1):
        for combo in itertools.combinations(masks, size):
            if np.bitwise_or.reduce(combo) & target == target:
                return size
    raise AssertionError("no cover")


@pytest.mark.parametrize("seed", range(8))
def test_branch_and_bound_finds_the_brute_force_minimum(seed):
    rng = np.random.default_rng(seed)
    masks = [int(m) for m in rng.integers(1, 1 << 12, size=12)]
    target = int(np.bitwise_or.reduce(masks))
    greedy = prune(greedy_cover(masks, target), masks, target)
    found, proved = branch_and_bound(masks, target, greedy)
    assert proved and np.bitwise_or.reduce([masks[i] for i in found]) == target
    assert len(found) == brute_minimum(masks, target) <= len(greedy)


@pytest.mark.parametrize("argv,fragment", [
    (("coverage", "add3", "--samples", "3", "--max-digits", "2"), "unknown task"),
    (("coverage", "add2", "--data", "x.pto.zip", "--samples", "3"), "not both"),
    (("coverage", "add2", "--samples", "3", "--max-digits", "0"), "--max-digits"),
    (("coverage", "add2", "--minimal", "--max-digits", "0"), "--max-digits"),
    (("coverage", "add2", "--minimal"), "--max-digits"),
    (("coverage", "add2"), "--data"),
    (("coverage", "add2", "--samples", "0", "--max-digits", "2"), "--samples"),
    (("coverage", "add2", "--samples", "3", "--max-digits", "2", "--sampler", "best"), "--sampler"),
    (("coverage", "add2", "--minimal", "--max-digits", "2", "--samples", "3"), "--minimal"),
])
def test_bad_options_are_one_line_errors(capsys, argv, fragment):
    code, _, err = run(capsys, *argv)
    assert_one_line_error(code, err, fragment)


def test_damaged_or_foreign_data_files_are_one_line_errors(capsys, tmp_path):
    bad = tmp_path / "bad.pto.zip"
    bad.write_bytes(b"not a zip at all")
    assert_one_line_error(*run(capsys, "coverage", "add2", "--data", bad)[::2], "not a dfst PTO dataset")
    other = tmp_path / "mult2.pto.zip"
    save_dataset(record_dataset(TASKS["mult2"], 2, 2, 0), other)
    assert_one_line_error(*run(capsys, "coverage", "add2", "--data", other)[::2], "mult2")
    missing = tmp_path / "none.zip"
    assert_one_line_error(*run(capsys, "coverage", "add2", "--data", missing)[::2], "does not exist")


def test_rules_used_is_the_reference_replay():
    task, inst = TASKS["mult2"], Instance("101", "11")
    used = rules_used(task.agent, task.layout(inst), task.max_steps(inst))
    assert used == replayed_rules(task, [("101", "11")])
