"""Certificates as plain JSON: enough for `check.py` to re-verify them against the weights.

Floats are written as Python floats: float32 values round-trip exactly through float64 and JSON.
"""

from __future__ import annotations

import hashlib

import numpy as np

from dfst.automata import Transducer
from dfst.certify.automaton import graph_automaton
from dfst.certify.bounded import BoundedProof
from dfst.certify.bounds import UNDERFLOW, slack
from dfst.certify.frame import U32
from dfst.certify.gridreach import MAX_LEN, Reach, departures
from dfst.certify.lockstep import Graph
from dfst.certify.regions import RegionProof
from dfst.grid.rollout import DfstWeights

# version 2: a certificate states only numbers the checker verifies (no unused radii in a bounded
# certificate, no margin limits); the checker refuses version 1 region and bounded certificates
FORMAT, VERSION = "dfst-certificate", 2


def weights_digest(weights: DfstWeights) -> str:
    """SHA-256 of A, B, C, h0 (float32 bytes, in that order): which model a certificate is about."""
    digest = hashlib.sha256()
    for w in (weights.A, weights.B, weights.C, weights.h0):
        digest.update(np.ascontiguousarray(w, dtype=np.float32).tobytes())
    return digest.hexdigest()


def _common(graph: Graph, weights: DfstWeights, agent: Transducer, mode: str, kind: str) -> dict:
    return {
        "format": FORMAT, "version": VERSION, "kind": kind, "mode": mode,
        "weights_sha256": weights_digest(weights), "agent": agent.to_dict(),
        "nodes": [{"state": agent.states[n.q], "h": [float(v) for v in n.h]} for n in graph.nodes],
        "edges": [[n, agent.alphabet[x], m] for (n, x), m in sorted(graph.edges.items())],
        "extracted": graph_automaton(graph, agent.alphabet, agent.blank).to_dict(),
    }


def exact_certificate(graph: Graph, weights: DfstWeights, agent: Transducer, mode: str) -> dict:
    cert = _common(graph, weights, agent, mode, "exact")
    cert["assumptions"] = [
        "the engine computes each score as a float32 sum over j = 0..d-1 in order, skipping zero "
        "entries of h, each product and sum rounded to nearest (no fused multiply-add)",
        "argmax takes the first maximum",
        "the expert reads only symbols it has rules for (true of a correct expert on valid inputs)"]
    return cert


def region_certificate(graph: Graph, proof: RegionProof, weights: DfstWeights, agent: Transducer,
                       mode: str, kind: str = "regions") -> dict:
    cert = _common(graph, weights, agent, mode, kind)
    cert |= {"T": proof.frame.T.tolist(), "omega": proof.frame.omega.tolist(),
             "radii": [float(r) for r in proof.radii], "slack": slack(proof.frame),
             "unit_roundoff": U32, "underflow": UNDERFLOW, "condition": proof.frame.condition}
    cert["assumptions"] = exact_certificate(graph, weights, agent, mode)["assumptions"] + [
        "max|h| >= 2^-60 before every step (so underflow adds at most d 2^-89 relative); in rescaled "
        "mode max|h| = 1 after every step",
        "the bounds are evaluated in float64 with the relative slack given (1e-9 + 1e-15 cond(T))"]
    return cert


def bounded_certificate(graph: Graph, proof: RegionProof, bounded: BoundedProof, weights: DfstWeights,
                        agent: Transducer, mode: str, task: str, max_digits: int) -> dict:
    """Exact on every run of at most bounded.steps steps: every instance of at most max_digits digits."""
    cert = region_certificate(graph, proof, weights, agent, mode, "bounded")
    del cert["radii"]  # a bounded proof's radii are its caps; the all-lengths radii did not close
    cert |= {"bounded": bounded.to_dict(), "max_digits": max_digits, "task": task}
    cert["assumptions"] = [a for a in cert["assumptions"] if not a.startswith("max|h| >= 2^-60")] + [
        "max|h| >= 2^-60 before every step: in plain mode proved for the steps covered (the scale bounds), "
        "in rescaled mode max|h| = 1 after every step",
        f"the expert needs at most the task's step bound ({task}.step_bound) on operands of at most "
        "max_digits digits, and that bound grows with the number of digits"]
    return cert


def grid_certificate(graph: Graph, reach: Reach, weights: DfstWeights, agent: Transducer, mode: str,
                     task: str) -> dict:
    """An exact lockstep graph whose departures from the expert no grid run reaches (`gridreach.py`)."""
    cert = _common(graph, weights, agent, mode, "grid")
    away = sorted(departures(graph, agent))
    cert |= {"task": task, "departures": [[n, agent.alphabet[x]] for n, x in away],
             "stack_cap": reach.cap, "grid_mode": reach.mode, "near": reach.near, "max_len": MAX_LEN,
             "configurations": reach.configs}
    cert["assumptions"] = exact_certificate(graph, weights, agent, mode)["assumptions"] + [
        f"every layout of {task} abstracts to one of those of operands of 1 to {MAX_LEN} digits, each "
        "non-blank cell generalised to any digit (checked: lengths past "
        f"{MAX_LEN - 2} add none)",
        "a run that leaves the layout stops there, the expert's and the model's alike"]
    return cert
