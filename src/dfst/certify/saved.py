"""Certification of a saved checkpoint, and re-verification of a saved certificate.

`certify_checkpoint` is what `dfst certify` runs: the proof search against the task's expert (or a
given agent), the independent checker on the certificate it produced, and the certificate file.
`check_saved_certificate` is `dfst check-certificate`.

What a CERTIFIED verdict proves is said in its report and certificate (`proof_statement`): the model
equals the expert (or the agent) on every input; that the expert computes the task's answer is
tested, on the instances `dfst.tasks.expert_check` lists, not proved.
"""

from __future__ import annotations

from pathlib import Path

from dfst.automata import transducer_from_dict
from dfst.certify.certificate import FORMAT as CERTIFICATE_FORMAT
from dfst.certify.check import check_certificate
from dfst.certify.core import certify
from dfst.errors import DfstError
from dfst.tasks.base import Task


def certify_checkpoint(checkpoint: str | Path, *, task: str | None = None,
                       agent_file: str | Path | None = None, rescale: bool = False,
                       out: str | Path | None = None, digits: int | None = None) -> tuple[dict, bool]:
    """The report of `dfst certify` on a checkpoint, and whether the check holds: CERTIFIED for every
    length (or, with `digits`, for every instance of at most that many digits) and the certificate
    accepted by the independent checker. A certificate is written to `out`, if given (the caller
    checks `out` with `dfst.io.outputs.check_output_file` before the search)."""
    from dfst.grid.rollout import DfstWeights
    from dfst.io.outputs import write_json
    from dfst.model.checkpoint import load_checkpoint
    from dfst.tasks.own_agent import checkpoint_task

    model, config = load_checkpoint(checkpoint)
    # the expert, or the agent the model imitates, or the agent file (on the task's alphabet)
    the_task = checkpoint_task(config, task, agent_file)
    agent = the_task.agent
    if model.config.k != agent.k:
        raise DfstError(f"checkpoint has k={model.config.k} symbols, the agent {agent.k}")
    weights = DfstWeights.of(*model.numpy_weights())
    result = certify(weights, the_task, agent=agent, rescale=rescale)
    report = result.to_dict() | {"checkpoint": str(checkpoint), "task": the_task.name} | the_task.describe()
    if result.certificate is not None:
        statement = proof_statement(the_task, result.max_digits)
        report |= statement
        result.certificate |= statement
        ok, why = check_certificate(result.certificate, weights.A, weights.B, weights.C, weights.h0, agent)
        report["checker"] = why if ok else f"REJECTED: {why}"
        if out is not None:
            write_json(Path(out), result.certificate, indent=None)
            report["certificate"] = str(out)
    covered = result.max_digits is None or (digits is not None and result.max_digits >= digits)
    holds = result.verdict == "CERTIFIED" and covered and not report["checker"].startswith("REJECTED")
    return report, holds


def proof_statement(task: Task, max_digits: int | None) -> dict:
    """What a certificate about `task`'s reference proves, in words ("proves"), and what that
    reference was checked on ("expert_check": the task's own expert only; an agent is its own reference)."""
    from dfst.tasks.expert_check import expert_check

    scope = "on every input length" if max_digits is None else \
        f"on every input of at most {max_digits:,} digits"
    if task.reference == "agent":
        about = task.describe()
        return {"proves": f"equal to agent {about['agent']!r} ({about['agent_file']}) {scope}; that agent is "
                          f"the reference: its answers are not checked against {task.name}'s"}
    check, unit = expert_check(task), "symbols" if task.symbols else "digits"
    return {"proves": f"equal to {task.name}'s expert {scope}; the expert was {check.describe(unit)}",
            "expert_check": check.to_dict()}


def check_saved_certificate(certificate: str | Path, checkpoint: str | Path) -> tuple[bool, str]:
    """Re-verify a certificate file against a checkpoint's weights: (accepted, reason)."""
    from dfst.io.inputs import read_json_file
    from dfst.model.checkpoint import load_checkpoint

    cert = read_json_file(certificate, f"cannot read certificate {certificate}")
    if not isinstance(cert, dict) or cert.get("format") != CERTIFICATE_FORMAT or "agent" not in cert:
        raise DfstError(f"{certificate} is not a dfst certificate")
    model, _ = load_checkpoint(checkpoint)
    return check_certificate(cert, *model.numpy_weights(), transducer_from_dict(cert["agent"]))
