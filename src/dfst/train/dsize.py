"""The hidden size d of a run, chosen from the PTOs, never from the expert's hidden states.

A learner sees (read, write, move) triples, not states. What the PTOs do say: two steps that read
the same symbol but write or move differently were taken in different states, so any automaton
that produces the PTOs has at least as many states as the most outputs seen after one symbol
(`states_lower_bound`). A run with `d_rule = "data"` starts there and lets the automaton read off
the trained model decide: when no restart yields an automaton that explains every training PTO, or
the one kept does not reproduce the expert's PTOs on a few longer operands (`dfst.train.validation`:
sub10's 225 PTOs at d = 12 read off a 22-state automaton that borrows wrongly past 3 digits), the
model had too few dimensions to find the algorithm, and training starts over with d grown by
`GROWTH` (at most `MAX_ROUNDS` sizes); when one does, the fine-tuning phase grows d to the
automaton's state count if it needs more (`dfst.train.finetune`). Starting small follows Occam:
with 20 add2 PTOs, d = 16 read off an 11-state automaton that fits them and fails at 10 digits,
d = 6 the 9-state one that adds (docs/research/training.md). A round of data growth
(`dfst.train.growth`) starts at the states of the automaton the round before read off, where that is
more than the grown data's lower bound: that automaton explained the smaller set of PTOs with so
many states, and the lower bound can sit far below what the task needs (the suite's add12: 14 where
the expert has 31; every round at d = 14 read off an automaton that explained its PTOs and departed).

`d_rule = "expert"` (the expert's state count, as the paper sets d) reads the hidden states: an
option for the published recipe and for runs made before d came from the data, labelled so.
A d given by the user (`--d`) is used as it is.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

from dfst.data.pto import PtoDataset
from dfst.io.inputs import read_json_if_exists
from dfst.io.outputs import file_kind
from dfst.io.targets import CONFIG_FILE
from dfst.tasks.base import Task
from dfst.train.budget import model_params
from dfst.train.config import TrainConfig

GROWTH = 1.5
MAX_ROUNDS = 5
D_RULES = {"data": "the PTOs' lower bound on the states, grown until an automaton read off explains them "
                   "and longer validation PTOs",
           "expert": "the expert's state count (reads its hidden states)"}  # config.CHOICES["d_rule"]


def states_lower_bound(data: PtoDataset) -> int:
    """The most distinct (write, move) outputs the PTOs show after one symbol read: each needs a
    state of its own (at least 2: a start and a stop)."""
    outputs: dict[int, set] = defaultdict(set)
    for x, w, m in zip(data.reads.tolist(), data.writes.tolist(), data.moves.tolist()):
        outputs[x].add((w, m))
    return max(2, max((len(seen) for seen in outputs.values()), default=0))


def d_sizes(cfg: TrainConfig, task: Task, data: PtoDataset, read_off: int = 0) -> list[int]:
    """The sizes a run may train at, in order: one when d is given or the expert's, else the data's
    lower bound grown by GROWTH until MAX_ROUNDS sizes. `read_off`: the states of the automaton read
    off the round before (a round of data growth), where the sizes start when it is larger."""
    if cfg.d is not None:
        return [cfg.d]
    if cfg.d_rule == "expert":
        return [task.agent.d]  # reads the hidden states: the labelled option (module docstring)
    sizes = [max(states_lower_bound(data), read_off)]
    while len(sizes) < MAX_ROUNDS:
        sizes.append(math.ceil(sizes[-1] * GROWTH))
    return sizes


def next_size(cfg: TrainConfig, sizes: list[int], summary: dict, data_next: bool = False) -> int | None:
    """The size to train at next when a finished round's d did not suffice: no automaton that
    explains every training PTO was read off its kept model (extraction refuses one that does not),
    or the one read off does not reproduce the validation PTOs (`dfst.train.validation`).
    None: it sufficed, it diverged (the learning rate's problem, not d's), the run reads no automaton
    off (`extract` off: nothing says whether d suffices), no size is left, or (`data_next`: a round
    of data growth is left) an automaton explains every training PTO and departs on held-out ones:
    the PTOs admit another algorithm, and more of them pin it down where a larger d rarely did (the
    suite's triple10, seed 1: every round tried d 4 to 21; the round after the PTOs grew agreed at 4)."""
    if not cfg.extract or summary.get("stopped_by") == "diverged":
        return None
    extracted = summary.get("extracted")
    agrees = extracted is not None and (extracted.get("validation") or {}).get("disagreement") is None
    if agrees or (extracted is not None and data_next):
        return None
    later = [d for d in sizes if d > summary["d"]]
    return later[0] if later else None


def tried_sizes(summary: dict) -> list[dict]:
    """The sizes tried before a finished round's, and that round's: d, final loss, CPU seconds so far."""
    return [*summary.get("tried", []), {"d": summary["d"], "final_loss": summary["final_loss"],
                                        "cpu_seconds": summary["cpu_seconds"]}]


def model_info(k: int, d: int, tried: list[dict]) -> dict:
    """The "model" entry of a run's config.json and summary: k, d, the parameter count, and the
    smaller sizes tried before (d, final loss, CPU seconds so far)."""
    return {"k": k, "d": d, "params": model_params(k, d), "tried": tried}


def stored_config(out: Path) -> dict | None:
    """The config.json of the run stored in `out`, read to decide what to resume (None: none there)."""
    # unverified: prepare_run checks the run's files next, with the hint a writer gives (--force)
    return read_json_if_exists(out / CONFIG_FILE, "run file", verify=False) if file_kind(out) == "directory" \
        else None


def resumed_model(out: Path, run_info: dict, sizes: list[int]) -> dict:
    """The "model" entry to resume with: the stored run's when it is this run (same config and data)
    at one of `sizes` (it may have grown d already), else `run_info`'s."""
    old = stored_config(out)
    same = (isinstance(old, dict) and old.get("train") == run_info["train"]
            and old.get("data", {}).get("sha256") == run_info["data"]["sha256"])
    model = old.get("model") if same else None
    if isinstance(model, dict) and model.get("d") in sizes and isinstance(model.get("tried", []), list):
        return model_info(run_info["model"]["k"], model["d"], model.get("tried", []))
    return run_info["model"]
