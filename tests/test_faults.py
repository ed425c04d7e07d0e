"""dfst bench faults: external models wrong on one kind of instance, against the protocol."""

from __future__ import annotations

import numpy as np
import pytest

from cli_helpers import run
from dfst.errors import DfstError
from dfst.studies.faults import (
    TRAVELS,
    borrow_travel,
    carry_travel,
    faulty,
    kinds,
    longest_carry_chain,
    run_faults,
)
from dfst.tasks import Instance, get_task

ADD10, SUB2 = get_task("add10"), get_task("sub2")


def test_how_far_a_carry_or_borrow_travels_past_the_shorter_operand():
    assert carry_travel("81", "9", 10) == 1          # 81 + 9: the carry enters the 8 and stops
    assert carry_travel("9", "191", 10) == 2         # through the 9 into the 1, either way round
    assert carry_travel("1", "9", 10) is None        # out of the top: it does not stop inside
    assert carry_travel("99", "1", 10) is None
    assert carry_travel("12", "3", 10) is None       # no carry at all
    assert carry_travel("55", "55", 10) is None      # no longer operand
    assert borrow_travel("100", "1", 10) == 2 and borrow_travel("20", "1", 10) == 1
    assert borrow_travel("25", "1", 10) is None
    assert longest_carry_chain("999", "1", 10) == 3 and longest_carry_chain("1010", "1010", 2) == 1


def test_a_faulty_model_is_wrong_exactly_on_its_kind():
    rng = np.random.default_rng(0)
    pairs = [(inst.a, inst.b) for inst in ADD10.hard_instances(12)]
    pairs += [(inst.a, inst.b) for inst in (ADD10.random_instance(rng, int(n), int(m))
                                            for n, m in rng.integers(1, 14, (300, 2)))]
    pairs += [("1" + "9" * (k - 1) + "5", "5") for k in TRAVELS]  # a carry entering k digits
    for name, kind in kinds(ADD10).items():
        answers = faulty(ADD10, kind)(pairs)
        wrong = [answer != ADD10.expected(Instance(a, b)) for (a, b), answer in zip(pairs, answers)]
        assert wrong == [kind(a, b, 10) for a, b in pairs], name
        assert any(wrong), f"{name}: no instance of its kind among the pairs"


def test_the_bench_says_which_fault_the_protocol_misses(capsys):
    rows = {row["fault"]: row for row in run_faults(["add10"], (10,), 10)}
    assert rows["carry_travels_1"]["caught_at"] == 10 and rows["carry_travels_1"]["wrong"] > 0
    assert rows["carry_travels_10"]["caught_at"] is None  # no instance of 10 digits can have it
    code, out, _ = run(capsys, "bench", "faults", "--tasks", "sub2", "--digits", "10")
    assert code == (0 if all(r["caught_at"] for r in run_faults(["sub2"], (10,))) else 1)
    assert "borrow_travels_1" in out
    code, _, err = run(capsys, "bench", "faults", "--tasks", "mult2")
    assert code == 2 and "addition and subtraction" in err
    started = []
    with pytest.raises(DfstError, match="addition and subtraction"):  # refused before add2 is scored
        run_faults(["add2", "mult2"], (10,), on_fault=lambda task, fault: started.append(fault))
    assert started == []
    code, _, err = run(capsys, "bench", "faults", "--tasks", ",")
    assert code == 2 and "no task" in err


def test_the_hard_set_sends_a_carry_and_a_borrow_every_distance():
    from dfst.tasks.hard import travel_lengths

    for name, base in (("add2", 2), ("add10", 10)):
        for n in (4, 12, 40, 102):
            hard = get_task(name).hard_instances(n)
            for k in travel_lengths(n):
                found = [inst for inst in hard if carry_travel(inst.a, inst.b, base) == k]
                assert {len(inst.a) > len(inst.b) for inst in found} == {True, False}, (name, n, k)
    hard = get_task("sub10").hard_instances(40)
    assert {borrow_travel(inst.a, inst.b, 10) for inst in hard} >= set(travel_lengths(40))
    assert set(travel_lengths(102)) == set(range(2, 101))  # every distance that fits, up to 100


def test_every_fault_is_caught_where_an_instance_of_it_fits():
    """n digits hold a carry entering at most n - 2 places past the shorter operand: 37 and 98
    places only at 100 (which the hard set missed while it sent carries 2-10, 16 and 64 places)."""
    rows = run_faults(["add2", "add10", "sub2", "sub10"], (10, 30, 100))
    caught = {row["fault"]: row["caught_at"] for row in rows}
    assert {caught[f"{kind}_travels_{k}"] for kind in ("carry", "borrow") for k in (37, 98)
            if f"{kind}_travels_{k}" in caught} == {100}
    fits = [row for row in rows if not row["fault"].endswith(tuple(f"_{k}" for k in TRAVELS if k > 98))]
    assert all(row["caught_at"] is not None for row in fits), [r for r in fits if r["caught_at"] is None]


@pytest.mark.slow
def test_a_carry_travelling_any_distance_up_to_a_thousand_digits_is_caught_there():
    """Every k up to n - 2 at 1,000 digits: a carry stopping 777 places past the shorter operand (the
    hard set stopped at 1,024 places and had only 128, 256 and 512 past 100). A figure at scale (15 s):
    the default suite runs the same bench at 10, 30 and 100 digits (every distance that fits is caught)
    and checks that the hard set at 1,000 digits sends every distance up to 998 (travel_lengths)."""
    rows = {(row["task"], row["fault"]): row for row in run_faults(["add2", "sub2"], (1_000,), random=0)}
    for fault in ("add2", "carry_travels_777"), ("sub2", "borrow_travels_777"):
        assert rows[fault]["caught_at"] == 1_000 and rows[fault]["wrong"] >= 1, fault


def test_the_hard_set_sends_carries_every_distance_it_can_pay_for_then_a_fixed_spread():
    from dfst.tasks.hard import every_travel_up_to, travel_lengths

    assert travel_lengths(1_000) == list(range(2, 999)) and every_travel_up_to(3_163) == 3_161
    at_10k, at_100k = travel_lengths(10_000), travel_lengths(100_000)
    assert set(range(2, 1_001)) <= set(at_10k) and 1_001 not in at_10k
    for n, lengths in ((10_000, at_10k), (100_000, at_100k)):
        assert {1 << j for j in range(1, 17) if 1 << j <= n - 2} <= set(lengths) and lengths[-1] == n - 2
        assert lengths == sorted(set(lengths)) and len(lengths) >= every_travel_up_to(n) + 16
    assert travel_lengths(100_000) == at_100k  # fixed by n: the same every time
