"""The library-augmented model of seed 002 on add2: a trained selector over compiled programs.

The model's only trainable part is the seed's selection layer: a softmax over library programs that
take two binary numbers in memory (`dfst.library`'s add2, the column adder, and a distractor, the
same loop that drops the carry). Every candidate runs on the differentiable machine (compiled,
frozen) on the training pairs; the mixture of their answer bits, weighted by the selection, is
trained by cross-entropy on the answers alone, until the chosen program holds `confidence` of the
weight. Evaluation is the DFST's protocol (`evaluate_predictor`): the selected program runs on the
discrete interpreter at every length. The exactness is the compiled program's, not learned: what
is learned is which program to call (one choice of two), from `samples` answer-supervised pairs.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from dfst.baselines.common import BaselineResult, evaluate_predictor, hardware, merge_config, sample_pairs
from dfst.errors import DfstError
from dfst.library import sources
from dfst.library.assembler import assemble
from dfst.library.execute import one_hot_state, run_soft
from dfst.library.interpreter import initial_state, run_discrete
from dfst.library.isa import MachineConfig
from dfst.library.machine import compile_program
from dfst.tasks.base import Instance, Task

DEFAULTS: dict = {
    "max_train_digits": 3,    # operand bits in training (the soft machine needs base >= 3 * bits + 1)
    "batch": 8,
    "lr": 0.1,
    "max_steps": 200,
    "confidence": 0.99,       # stop once the selected program holds this weight
    "eval_digits": "10,100,1000,10000",
    "random": 10,
}
# The distractor: the same loop with the carry left out of each column's sum (xor, carries lost).
DROP_CARRY = sources.ADD2.replace("add r4 r2 r4          # s = a_i + b_i + carry, 0..3",
                                  "copy r4 r4            # s = a_i + b_i (the carry dropped)")
CANDIDATES = {"add2": sources.ADD2, "drop-carry": DROP_CARRY}


def _bits(digits: str, width: int) -> list[int]:
    value = int(digits, 2)
    return [(value >> i) & 1 for i in range(width)]


def _machine(width: int, base: int) -> MachineConfig:
    return MachineConfig(base, 8, 3 * width + 1, 16 * width + 12)


def soft_answer_bits(source: str, pairs: list[Instance], width: int) -> torch.Tensor:
    """(B, width + 1, 2): the distribution of each answer bit after a soft run of `source`."""
    config = _machine(width, max(3 * width + 1, 4))
    code = assemble(source, config.registers)
    registers = torch.zeros(len(pairs), config.registers, dtype=torch.long)
    registers[:, 0] = width
    memory = torch.tensor([_bits(p.a, width) + _bits(p.b, width) + [0] * (width + 1) for p in pairs])
    with torch.no_grad():
        final = run_soft(compile_program(code, config), one_hot_state(config, len(code), registers, memory),
                         config, prune=True)
    return final.memory[:, 2 * width:, :2]


def discrete_answer(source: str, instance: Instance) -> str:
    """The program's answer on the interpreter, as a binary digit string (most significant first)."""
    width = max(len(instance.a), len(instance.b), 1)
    config = _machine(width, 3 * width + 1)
    memory = dict(enumerate(_bits(instance.a, width) + _bits(instance.b, width)))
    code = assemble(source, config.registers)
    state = run_discrete(code, config, initial_state(config, {0: width}, memory))
    if not state.halted:
        raise DfstError("the selected library program did not halt")
    total = sum(bit << i for i, bit in enumerate(state.memory[2 * width:]))
    return format(total, "b")


def train_selector(task: Task, config: dict, seed: int) -> tuple[torch.Tensor, int, list[float]]:
    """Selection logits trained on answers alone; the pairs seen, and the add2 weight per step."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    logits = torch.nn.Parameter(torch.zeros(len(CANDIDATES)))
    optimiser = torch.optim.Adam([logits], lr=config["lr"])
    names, seen, trace = list(CANDIDATES), 0, []
    for _ in range(config["max_steps"]):
        pairs = sample_pairs(task, rng, config["batch"], config["max_train_digits"])
        width = config["max_train_digits"]
        outputs = torch.stack([soft_answer_bits(CANDIDATES[n], pairs, width) for n in names])  # (K,B,w+1,2)
        target = torch.tensor([_bits(format(int(p.a, 2) + int(p.b, 2), "b"), width + 1) for p in pairs])
        mixture = torch.einsum("k,kbwv->bwv", logits.softmax(0), outputs)
        loss = torch.nn.functional.nll_loss(mixture.clamp_min(1e-9).log().flatten(0, 1), target.flatten())
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        seen += len(pairs)
        trace.append(round(float(logits.detach().softmax(0).max()), 4))
        if trace[-1] >= config["confidence"]:
            break
    return logits.detach(), seen, trace


def run(task: Task, *, seed: int = 0, config: dict | None = None, progress: bool = True) -> BaselineResult:
    """Train the selector on `task` (add2 only) and score the selected program on the DFST protocol."""
    if task.name != "add2":
        raise DfstError("the library model has a compiled program for add2 only")
    config = merge_config(config or {}, DEFAULTS, "library-model")
    started = time.process_time()
    logits, seen, trace = train_selector(task, config, seed)
    seconds = time.process_time() - started
    chosen = list(CANDIDATES)[int(logits.argmax())]
    digits = [int(d) for d in str(config["eval_digits"]).split(",")]
    scores = evaluate_predictor(task, lambda batch: [discrete_answer(CANDIDATES[chosen], i) for i in batch],
                                digits, random=config["random"], seed=seed)
    return BaselineResult(
        system="library model (seed 002)", task=task.name, seed=seed, samples=seen, params=len(CANDIDATES),
        max_train_digits=config["max_train_digits"], robust_lg=scores["robust_lg"],
        probabilistic_lg=scores["probabilistic_lg"], train_seconds=round(seconds, 3), hardware=hardware(),
        levels=scores["levels"], config=config,
        notes="a softmax selecting a compiled library program, trained on answers through the soft "
              "machine; exactness is the compiled add2's, the learned part is the choice of program",
        details={"selected": chosen, "selection": dict(zip(CANDIDATES, logits.softmax(0).tolist())),
                 "selection_trace": trace})
