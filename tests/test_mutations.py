"""Mutation testing of the protocol (`dfst bench mutations`): every single-rule rewiring of an
expert that gives a wrong answer on some instance must fail the protocol at 3, 30 or 300 digits."""

from __future__ import annotations

import functools
from dataclasses import replace

import pytest

from cli_helpers import assert_one_line_error, run, run_json
from dfst.studies.mutations import Mutant, judge, kills, mutants, protocol_kill, search_instances
from dfst.tasks import TASKS
from dfst.tasks.base import Instance

ADD2 = TASKS["add2"]


def test_every_single_rule_rewiring_is_a_mutant_once():
    found = mutants(ADD2.agent)
    halting = [key for key, r in ADD2.agent.rules.items() if r.move == "S"]
    # a write changes to 2 other symbols; a non-halting rule also to 3 other moves and 7 other states
    assert len(found) == len(halting) * 2 + (len(ADD2.agent.rules) - len(halting)) * (2 + 3 + 7) == 258
    assert len(set(found)) == len(found)
    for mutant in found[:40]:
        agent = mutant.apply(ADD2.agent)
        changed = [key for key in ADD2.agent.rules if agent.rules[key] != ADD2.agent.rules[key]]
        assert changed == [(mutant.state, mutant.read)]
        assert getattr(agent.rules[changed[0]], mutant.field) == mutant.value


def test_the_carry_past_the_shorter_operand_is_in_the_hard_set():
    """sum1 reading a blank mid-number (101 + 1): missed by hard set 1, which the bench found."""
    agent = Mutant("sum1", "_", "next", "add0").apply(ADD2.agent)
    assert kills(ADD2, agent, Instance("101", "1")) and not kills(ADD2, ADD2.agent, Instance("101", "1"))
    assert protocol_kill(ADD2, agent) == 3
    names = {i.name for i in ADD2.hard_instances(5)}
    assert {"carry_past_short_0", "carry_past_short_1_swapped", "carry_into_leading_zeros"} <= names


def test_a_survivor_that_only_changes_the_policy_is_unknown_with_its_reason():
    search = functools.cache(lambda: search_instances(ADD2))
    verdict = judge(ADD2, Mutant("add0", "0", "write", "1"), search)  # rewrites a digit never read again
    assert verdict.status == "unknown" and "policy leaves" in verdict.detail and "6 symbols" in verdict.detail
    assert judge(ADD2, Mutant("carry", "1", "write", "1"), search).status == "killed"


def test_the_search_finds_a_comparison_decided_late_by_a_near_tie():
    """compare10's (put_gt, 8) -> pair_9: the protocol misses it, and so do random pairs; operands of
    one length a few digits apart are wrong, so the search reports it as a blind spot, not unknown."""
    compare10 = replace(TASKS["compare10"], test_hard=None)  # the protocol before the overturned ties
    mutant = Mutant("put_gt", "8", "next", "pair_9")
    found = search_instances(compare10)
    ties = [i for i in found if i.name == "near_tie"]
    assert ties and all(len(i.a) == len(i.b) and compare10.domain_problem(i.a, i.b) is None for i in ties)
    assert protocol_kill(compare10, mutant.apply(compare10.agent)) is None
    verdict = judge(compare10, mutant, lambda: found)
    assert verdict.status == "blind spot" and "near_tie search" in verdict.detail
    no_ties = [i for i in found if i.name != "near_tie"]
    assert judge(compare10, mutant, lambda: no_ties).status == "unknown"


def test_the_overturned_tie_runs_kill_the_experts_the_near_ties_found():
    """Where compare10's expert goes after writing > over a tied column, rewired to pair_8, pair_9 or
    put_gt: 20 such experts are wrong and passed the protocol before its test-only family (the near-tie
    search found 18 of them); every one fails it now, at its first length."""
    task = TASKS["compare10"]
    before = replace(task, test_hard=None)
    rewired = [Mutant("put_gt", y, "next", target).apply(task.agent)
               for y in task.operand_symbols for target in ("pair_8", "pair_9", "put_gt")]
    missed = [agent for agent in rewired if protocol_kill(before, agent) is None]
    assert len(missed) == 20
    assert all(any(kills(task, agent, inst) for inst in task.test_hard(5, 10)) for agent in missed)
    assert [protocol_kill(task, agent) for agent in missed] == [3] * 20


@pytest.mark.slow
def test_the_add2_protocol_kills_every_killable_mutant(capsys):
    """The bench's figure on add2 (258 mutants, 15 s); the default suite has the same accounting on
    parity2 below."""
    report = run_json(capsys, "bench", "mutations", "add2")
    assert report["mutants"] == 258 and report["blind spot"] == 0 and report["score"] == 1.0
    assert report["killed"] + report["equivalent"] + report["unknown"] == 258
    assert all(s["status"] != "killed" for s in report["survivors"])


def test_workers_give_the_same_verdicts_as_one_process(capsys):
    """parity2's bench from the CLI in one process equals its report from two workers, and the
    protocol kills every killable mutant of it."""
    from dfst.studies.mutations import mutation_report

    task = TASKS["parity2"]
    alone, side_by_side = run_json(capsys, "bench", "mutations", "parity2"), mutation_report(task, workers=2)
    for report in (alone, side_by_side):
        report.pop("cpu_seconds"), report.pop("workers")
    assert alone == side_by_side and alone["mutants"] == len(mutants(task.agent))
    assert alone["blind spot"] == 0 and alone["score"] == 1.0 and alone["killed"] > 0
    assert alone["killed"] + alone["equivalent"] + alone["unknown"] == alone["mutants"]
    assert all(s["status"] != "killed" for s in alone["survivors"])


def test_workers_below_one_is_refused(capsys):
    code, _, err = run(capsys, "bench", "mutations", "parity2", "--workers", "0")
    assert_one_line_error(code, err, "--workers must be >= 1")


def test_an_agents_lookup_tables_are_built_once_and_read_only():
    import numpy as np
    import pytest

    first, again = ADD2.agent.tables(), ADD2.agent.tables()
    assert all(a is b for a, b in zip(first, again))
    with pytest.raises(ValueError):
        first[0][0, 0] = np.int32(1)  # shared by every run of the agent: nobody may write them
