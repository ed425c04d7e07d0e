"""Counterexample-guided training: train, certify, add the counterexample's instance, train again.

Round r trains `cfg` on the current PTOs into OUT/round<r> and certifies the model the run delivers
(the automaton read off the trained DFST when there is one, else the DFST itself, h rescaled:
`dfst.certify`). CERTIFIED ends the loop; a COUNTEREXAMPLE with a concrete task instance adds that
instance's PTO to the data (it may be longer than the training length: it is what failed); anything
else (INCONCLUSIVE, a disagreement no small instance reaches, or a counterexample the training data
already holds, which more data cannot fix) ends it too. OUT/rounds.json lists
every round.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from dfst.checkpoint import load_checkpoint
from dfst.data import PtoDataset
from dfst.io import write_atomic
from dfst.rollout import DfstWeights
from dfst.tasks import Instance, Task, get_task
from dfst.train import TrainConfig, train
from dfst.train_data import SAMPLERS, record_instances


def with_instance(task: Task, data: PtoDataset, a: str, b: str) -> PtoDataset:
    """The dataset plus the expert's PTO on (a, b)."""
    instances = [Instance(x, y) for x, y in data.operands] + [Instance(a, b, "counterexample")]
    added = list(data.sampling.get("counterexamples", [])) + [[a, b]]
    return record_instances(task, instances, data.seed, data.sampling | {"counterexamples": added})


def certify_run(run: Path, summary: dict, task: Task) -> tuple[str, dict]:
    """Certify what the run delivers; returns (which model, the verdict's dictionary)."""
    from dfst.certify import certify

    which = "extracted" if summary.get("extracted") else "model"
    model, _ = load_checkpoint(run / which, expect_task=task.name)
    result = certify(DfstWeights.of(*model.numpy_weights()), task, rescale=True)
    return which, result.to_dict() | {"counterexample": result.counterexample}


def train_until_certified(cfg: TrainConfig, out: str | Path, *, max_rounds: int = 5,
                          data: PtoDataset | None = None, progress: Callable[[dict], None] | None = None,
                          command: str | None = None) -> dict:
    """Rounds of train + certify; returns {"certified", "samples", "rounds", "model"}."""
    task, out = get_task(cfg.task), Path(out)
    data = data or SAMPLERS[cfg.sampler](task, cfg.samples, cfg.max_digits, cfg.seed)
    rounds: list[dict] = []
    for r in range(max_rounds):
        run = out / f"round{r}"
        summary = train(cfg, run, data=data, resume=True, progress=progress, command=command)
        which, verdict = certify_run(run, summary, task)
        instance = (verdict.get("counterexample") or {}).get("instance")
        rounds.append({"round": r, "samples": data.samples, "model": str(run / which),
                       "verdict": verdict["verdict"],
                       "added": None if instance is None else [instance["a"], instance["b"]]})
        if verdict["verdict"] == "CERTIFIED" or instance is None:
            break
        if (instance["a"], instance["b"]) in set(map(tuple, data.operands)):
            rounds[-1]["note"] = "the counterexample is already a training instance: the model did not fit it"
            break
        data = with_instance(task, data, instance["a"], instance["b"])
    report = {"certified": rounds[-1]["verdict"] == "CERTIFIED", "samples": rounds[-1]["samples"],
              "model": rounds[-1]["model"], "rounds": rounds}
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / "rounds.json", (json.dumps(report, indent=1) + "\n").encode())
    return report
