"""Training's view of a model: closed-loop exactness on the grid, and the automaton read off it.

`evaluate_model` runs the evaluation protocol of `dfst eval` (h rescaled every step) at each
evaluation length and at target_digits, never on a training pair (held out as `dfst eval` holds
them out: the evaluation may stop training at the target); with `extract`, also on the automaton
read off the model's hidden states on the training PTOs. `extract_or_none` is training's one call
into extraction.
"""

from __future__ import annotations

from dfst.data import PtoDataset
from dfst.errors import DfstError
from dfst.grid.rollout import DfstWeights
from dfst.model import DFST
from dfst.protocol.config import EvalConfig
from dfst.protocol.evaluate import run_protocol
from dfst.protocol.instances import HeldOut
from dfst.tasks import Task
from dfst.train.config import TrainConfig


def extract_or_none(model: DFST, data: PtoDataset, task: Task):
    """The automaton read off the model's states on `data` by dfst.extract's default method (clustered,
    then merged), or None when the states show no conflict-free automaton."""
    from dfst.extract import extract

    try:
        return extract(model, data, agent=task.agent)
    except DfstError:
        return None


def evaluate_model(model: DFST, task: Task, cfg: TrainConfig, data: PtoDataset | None = None) -> dict:
    """Closed-loop exact match (h rescaled every step) at each evaluation length and target_digits;
    with cfg.extract, also of the automaton read off the model's states on the training `data`."""
    result = _closed_loop(DfstWeights.of(*model.numpy_weights()), task, cfg, data=data)
    if cfg.extract and data is not None:
        from dfst.model.compile import compile_agent

        found = extract_or_none(model, data, task)
        if found is None:
            result["extracted"] = None  # no conflict-free automaton yet
        else:
            weights = DfstWeights.of(*compile_agent(found.agent).numpy_weights())
            result["extracted"] = _closed_loop(weights, task, cfg, data=data) | {"states": found.agent.d,
                                                                                "rules": found.pairs}
    return result


def best_robust(evaluation: dict) -> int:
    """The robust length of the model or of its extracted automaton, whichever is longer."""
    extracted = evaluation.get("extracted") or {}
    return max(evaluation["robust_max_digits"], extracted.get("robust_max_digits", 0))


def plain_closed_loop(model: DFST, task: Task, cfg: TrainConfig, data: PtoDataset | None = None) -> dict:
    """The evaluation lengths' closed-loop exactness with plain h (the engine's default mode)."""
    return _closed_loop(DfstWeights.of(*model.numpy_weights()), task, cfg, rescale=False, data=data)


def _closed_loop(weights: DfstWeights, task: Task, cfg: TrainConfig, rescale: bool = True,
                 data: PtoDataset | None = None) -> dict:
    """The protocol at the evaluation lengths, less the training pairs of `data`."""
    digits = sorted(set(cfg.eval_digits) | ({cfg.target_digits} - {0}))
    eval_cfg = EvalConfig(tuple(digits), random=cfg.eval_random, rescale=rescale)
    held_out = HeldOut(data.operands if data is not None else ())
    report, _ = run_protocol(task, weights, eval_cfg, held_out=held_out)
    levels = [{key: lv[key] for key in ("digits", "robust", "exact", "instances", "random_exact", "random")}
              for lv in report["levels"]]
    return {"robust_max_digits": report["robust_max_digits"],
            "probabilistic_max_digits": report["probabilistic_max_digits"],
            "seconds": report["seconds"], "levels": levels}
