"""Bounded certificates: exact on every instance up to max_digits, never beyond what holds, re-checked."""

from __future__ import annotations

import copy
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dfst.certify import certify, check_certificate
from dfst.certify.bounded import digits_within, orbit_steps
from dfst.certify.search import confirm
from dfst.grid.rollout import DfstWeights
from dfst.model.compile import compile_agent
from dfst.tasks import TASKS
from dfst.tasks.base import Instance

ADD2 = TASKS["add2"]


def dense_add2(growth: float = 1.0) -> DfstWeights:
    """Compiled add2 in a random orthogonal basis: float32 weights that are exact only up to rounding
    (closed loop exact far beyond 10^4 digits, with gain exactly 1 along the carry loop), the carry
    loop optionally scaled by `growth`."""
    A, B, C, h0 = compile_agent(ADD2.agent).numpy_weights()
    q, x = ADD2.agent.states.index("carry"), ADD2.alphabet.index("1")
    A[x, q, q] *= growth
    T = np.linalg.qr(np.random.default_rng(0).normal(size=(A.shape[1],) * 2))[0]
    Ti = np.linalg.inv(T)
    return DfstWeights.of(T @ A @ Ti, B @ Ti, C @ Ti, T @ h0)


class Certified(dict):
    """{rescale: certify's result on `weights`}, each mode certified once, when a test first asks (the
    plain one as `dfst certify` runs it: the CLI test shows that result)."""

    def __init__(self, weights: DfstWeights):
        super().__init__()
        self.weights = weights

    def __missing__(self, rescale: bool):
        pump = 0 if rescale else 100_000
        self[rescale] = certify(self.weights, ADD2, rescale=rescale, pump_max_digits=pump)
        return self[rescale]


@pytest.fixture(scope="module")
def dense():
    w = dense_add2()
    return w, Certified(w)


@pytest.mark.parametrize("rescale", [False, True])
def test_a_dense_basis_gets_a_bounded_certificate_the_checker_accepts(dense, rescale):
    """What it claims holds: every hard instance at the plain bound (731 digits), which the rescaled
    one (7,980) covers too; at the rescaled bound itself, in the slow test below."""
    w, results = dense
    result = results[rescale]
    assert result.verdict == "CERTIFIED" and result.certificate["kind"] == "bounded"
    assert result.max_digits >= 100 and result.to_dict()["all_lengths"] is False
    assert check_certificate(result.certificate, w.A, w.B, w.C, w.h0, ADD2.agent) == (True, "ok")
    assert ADD2.step_bound(result.max_digits, result.max_digits, 2) <= result.max_steps
    for instance in ADD2.hard_instances(min(result.max_digits, results[False].max_digits)):
        assert confirm(ADD2, w, instance, rescale).exact, instance.name


@pytest.mark.slow
def test_the_rescaled_bounded_claim_holds_at_its_thousands_of_digits(dense):
    w, results = dense
    for instance in ADD2.hard_instances(results[True].max_digits):
        assert confirm(ADD2, w, instance, True).exact, instance.name


def test_rescaled_mode_is_certified_further_than_plain(dense):
    """Plain mode must also keep max|h| inside float32's range, which its bound costs."""
    _, results = dense
    assert results[True].max_digits > results[False].max_digits


@pytest.mark.parametrize("change", ["steps", "max_digits", "top", "norm"])
def test_the_checker_rejects_a_tampered_bounded_certificate(dense, change):
    w, results = dense
    cert = copy.deepcopy(results[False].certificate)
    bounded = cert["bounded"]
    if change == "steps":
        bounded["steps"] *= 10
    elif change == "max_digits":
        cert["max_digits"] *= 10
    elif change == "top":
        bounded["top"] *= 10
        bounded["caps"] = [c * 10 for c in bounded["caps"]]
    else:
        bounded["norm"]["grow"] /= 100
    ok, why = check_certificate(cert, w.A, w.B, w.C, w.h0, ADD2.agent)
    assert not ok, change


def test_a_slowly_growing_dense_model_is_certified_only_short_of_its_failure():
    """Plain mode, carry loop x (1 + 2e-3): h overflows float32 after ~44,000 carry steps. Whatever the
    certificate says must hold: its length is below the first failing carry chain."""
    w = dense_add2(1 + 2e-3)
    result = certify(w, ADD2, pump_max_digits=0)
    chain = lambda n: Instance("1", "1" * n, "chain")  # noqa: E731
    assert not confirm(ADD2, w, chain(60_000), False).exact
    if result.verdict == "CERTIFIED":
        assert result.max_digits is not None and result.max_steps < 44_000
        assert confirm(ADD2, w, chain(result.max_digits), False).exact


def test_orbit_steps_is_a_lower_bound_of_the_real_orbit():
    """The interval count never exceeds the steps the map really takes to pass the top."""
    cases = ((1e-3, 1.0, 0.0), (1e-4, 1.0, 0.9), (1e-3, 1.01, 0.5), (1e-5, 0.999, 0.2), (1e-6, 1.0, 0.0))
    for a, gain, kappa in cases:
        F = lambda rho, a=a, gain=gain, kappa=kappa: (a + gain * rho) / (1 - kappa * rho)  # noqa: E731
        top, rho, steps = 0.5, 0.0, 0
        while rho <= top:
            rho, steps = F(rho), steps + 1
        bound = orbit_steps(F, top, cap=10**8)
        assert bound <= steps - 1, (a, gain, kappa, bound, steps)  # rho_t <= top for t <= steps - 1
        assert bound >= 0.3 * (steps - 1), (a, gain, kappa, bound, steps)  # and not vacuous
        assert steps < 1000 or bound >= 0.8 * (steps - 1)  # tight on long orbits, the ones that matter


def test_digits_within_inverts_the_step_bound():
    for steps in (0, 10, 1000, 123_456, 10**9):
        n = digits_within(ADD2, steps)
        if n:
            assert ADD2.step_bound(n, n, 2) <= steps < ADD2.step_bound(n + 1, n + 1, 2)
        else:
            assert ADD2.step_bound(1, 1, 2) > steps


def test_certify_gives_one_verdict_whose_exit_code_it_states(capsys, tmp_path, dense, monkeypatch):
    """A bounded proof when every length was asked: NOT CERTIFIED, exit 1, one verdict line, what
    was proved and why not every length in words, and no JSON (that is --json's)."""
    import torch

    import dfst.certify.saved
    from cli_helpers import run
    from dfst.model import DFST
    from dfst.model.checkpoint import save_checkpoint

    w, results = dense
    tensors = (torch.from_numpy(np.asarray(a, dtype=np.float32)) for a in (w.A, w.B, w.C, w.h0))
    out = save_checkpoint(DFST.from_weights(*tensors, task="add2"), tmp_path / "dense", {})

    def certified(weights, task, *, agent, rescale):  # the proof search is the fixture's, done once
        assert (task.name, agent, rescale) == ("add2", ADD2.agent, False)
        assert all(np.array_equal(getattr(weights, k), getattr(w, k)) for k in ("A", "B", "C", "h0"))
        return copy.deepcopy(results[False])  # the CLI adds to the certificate: not to the fixture's

    monkeypatch.setattr(dfst.certify.saved, "certify", certified)
    code, text, _ = run(capsys, "certify", out)
    first = " ".join(text.split("\n  ")[0].split())
    assert code == 1 and first.startswith("NOT CERTIFIED (add2, plain mode")
    assert re.search(r"proved up to [\d,]+ digits only; not for every length$", first), first
    text = " ".join(text.split())
    assert "on every input of at most" in text and "why not every length:" in text  # not an error
    assert "diagnosis:" not in text and "CERTIFIED" not in text.replace("NOT CERTIFIED", "")
    assert not any(mark in text for mark in '{}"')  # no JSON unless --json


@given(st.sampled_from(["CERTIFIED", "COUNTEREXAMPLE", "INCONCLUSIVE"]), st.none() | st.integers(1, 10**6),
       st.none() | st.integers(1, 10**6), st.booleans())
def test_the_verdict_says_what_the_exit_code_says(verdict, bound, digits, rejected):
    """CERTIFIED (not NOT CERTIFIED) exactly where dfst certify exits 0: the proof covers what was
    asked (every length, or --digits N) and the checker accepted it; a short bound names itself."""
    from dfst.cli.certify import verdict_line

    report = {"verdict": verdict, "task": "add2", "mode": "plain", "seconds": 1.0, "max_digits": bound,
              "proves": "equal to add2's expert", "checker": "REJECTED: no" if rejected else "ok"}
    covered = bound is None or (digits is not None and bound >= digits)
    holds = verdict == "CERTIFIED" and covered and not rejected  # as certify_checkpoint decides
    line = verdict_line(report, holds, digits)
    assert line.startswith("[green]CERTIFIED") == holds
    if verdict == "CERTIFIED" and not holds and not rejected:
        assert f"proved up to {bound:,} digits only" in line and line.startswith("[red]NOT CERTIFIED")
        assert ("not for every length" in line) == (digits is None)


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) |
                    st.text("abc _-.", max_size=5),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text("abc_", max_size=4),
                                                                                inner, max_size=3),
                    max_leaves=12))
def test_certify_shows_any_report_value_as_plain_lines(value):
    """Whatever a diagnosis or counterexample holds, dfst certify shows it as lines of words: no
    JSON braces, quotes or brackets, and every key's words."""
    from dfst.cli.certify import plain_lines

    lines = plain_lines({"diagnosis": value})
    assert lines and not any(mark in line for line in lines for mark in '{}[]"')
    keys = [k for k in value if k] if isinstance(value, dict) else []
    assert all(any(k.replace("_", " ") in line for line in lines) for k in keys)


@pytest.mark.parametrize("scale", [0.01, 1.0, 100.0])
def test_a_bounded_certificate_states_no_radii_and_radii_added_are_refused(dense, scale):
    """Issue 54: radii shrunk 100x were accepted because a bounded proof never used them (its caps
    are its radii). A certificate now states only what the checker verifies."""
    w, results = dense
    cert = copy.deepcopy(results[True].certificate)
    assert "radii" not in cert and "limits" not in cert
    cert["radii"] = [scale] * len(cert["nodes"])
    ok, why = check_certificate(cert, w.A, w.B, w.C, w.h0, ADD2.agent)
    assert not ok and "radii" in why
