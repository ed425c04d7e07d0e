"""The library-augmented model (a differentiable program library) on add2 and sort2: a trained
selector over compiled programs.

The model's only trainable part is the seed's selection layer: a softmax over library programs that take
the task's input in memory. add2: `dfst.baselines.library`'s add2 (the column adder) and a distractor,
the same loop that drops the carry; sort2: the library's insertion sort and a distractor, the same sort
with the comparison reversed (descending). Every candidate runs on the differentiable machine
(compiled, frozen) on the training pairs; the mixture of their answer cells, weighted by the
selection, is trained by cross-entropy on the answers alone, until the chosen program holds
`confidence` of the weight. Evaluation is the DFST's protocol (`evaluate_predictor`): the selected
program runs on the discrete interpreter at every length (the soft machine's cost grows as base² ×
steps, and both grow with the length: see docs/research/library.md). The exactness is the compiled program's,
not learned: what is learned is which program to call (one choice of two), from `samples`
answer-supervised pairs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from dfst.baselines.common import evaluate_predictor, hardware, merge_config, sample_pairs
from dfst.baselines.library import sources
from dfst.baselines.library.assembler import assemble
from dfst.baselines.library.execute import one_hot_state, run_soft
from dfst.baselines.library.interpreter import DiscreteState, initial_state, run_discrete
from dfst.baselines.library.isa import MachineConfig
from dfst.baselines.library.machine import compile_program
from dfst.errors import DfstError
from dfst.results import Result
from dfst.tasks.base import Instance, Task
from dfst.train import deterministic

DEFAULTS: dict = {
    "max_train_digits": 3,    # operand digits in training (the soft machine's base grows with them)
    "batch": 8,
    "lr": 0.1,
    "max_steps": 200,
    "confidence": 0.99,       # stop once the selected program holds this weight
    "eval_digits": "",        # the protocol's lengths; empty: the task's (LibraryTask.eval_digits)
    "random": 10,
    "threads": 1,             # torch threads: with one, a seed reproduces a run bit for bit
}
SYSTEM = "program library (register machine)"  # its name in result files and tables
# add2's distractor: the same loop with the carry left out of each column's sum (xor, carries lost).
DROP_CARRY = sources.ADD2.replace("add r4 r2 r4          # s = a_i + b_i + carry, 0..3",
                                  "copy r4 r4            # s = a_i + b_i (the carry dropped)")
# sort2's distractor: the same insertion sort, comparing the other way round (descending).
SORT_DESCENDING = sources.SORT.replace("lt r2 r5 r6           # key < mem[j - 1] ?",
                                       "lt r5 r2 r6           # mem[j - 1] < key ?")
CANDIDATES = {"add2": sources.ADD2, "drop-carry": DROP_CARRY}
SORT_CANDIDATES = {"insertion-sort": sources.SORT, "sort-descending": SORT_DESCENDING}


def _bits(digits: str, width: int) -> list[int]:
    value = int(digits, 2)
    return [(value >> i) & 1 for i in range(width)]


@dataclass(frozen=True)
class Layout:
    """How one task's instances sit in the machine, and where the answer is read."""

    config: Callable[[int], MachineConfig]                      # the machine for inputs of `width` digits
    registers: Callable[[Instance, int], dict[int, int]]
    memory: Callable[[Instance, int], list[int]]
    answer_cells: Callable[[int], slice]                        # the answer's cells at `width`
    target: Callable[[Instance, int], list[int]]                # Python's answer, cell by cell
    read: Callable[[DiscreteState, Instance, int], str]         # the interpreter's answer, as the task's
    width: Callable[[Instance], int]
    eval_digits: str


def _add2_config(width: int) -> MachineConfig:
    return MachineConfig(max(3 * width + 1, 4), 8, 3 * width + 1, 16 * width + 12)


def _add2_read(state: DiscreteState, instance: Instance, width: int) -> str:
    return format(sum(bit << i for i, bit in enumerate(state.memory[2 * width:])), "b")


ADD2 = Layout(
    config=_add2_config, registers=lambda _, width: {0: width},
    memory=lambda p, width: _bits(p.a, width) + _bits(p.b, width),
    answer_cells=lambda width: slice(2 * width, 3 * width + 1),
    target=lambda p, width: _bits(format(int(p.a, 2) + int(p.b, 2), "b"), width + 1),
    read=_add2_read, width=lambda p: max(len(p.a), len(p.b), 1), eval_digits="10,100,1000,10000")

# sort2: the string's symbols in cells 0..k-1, k in r0 (the sort indexes cells by value: base > k).
SORT2 = Layout(
    config=lambda width: MachineConfig(width + 1, 8, width, 14 * width * width + 10),
    registers=lambda p, _: {0: len(p.a)}, memory=lambda p, _: [int(s) for s in p.a],
    answer_cells=lambda width: slice(0, width),
    target=lambda p, width: [0] * p.a.count("0") + [1] * p.a.count("1") + [0] * (width - len(p.a)),
    read=lambda state, p, _: "".join(str(v) for v in state.memory[:len(p.a)]),
    width=lambda p: len(p.a), eval_digits="10,100,1000")

TASKS: dict[str, tuple[Layout, dict[str, str]]] = {"add2": (ADD2, CANDIDATES),
                                                    "sort2": (SORT2, SORT_CANDIDATES)}


def soft_answer(layout: Layout, source: str, pairs: list[Instance], width: int) -> torch.Tensor:
    """(B, answer cells, 2): the distribution of each answer cell after a soft run of `source` on
    `pairs`, every input padded to `width` digits (cells past an input's own are 0 in the target)."""
    config = layout.config(width)
    code = assemble(source, config.registers)
    registers = torch.zeros(len(pairs), config.registers, dtype=torch.long)
    memory = torch.zeros(len(pairs), config.cells, dtype=torch.long)
    for row, pair in enumerate(pairs):
        for index, value in layout.registers(pair, width).items():
            registers[row, index] = value
        values = layout.memory(pair, width)
        memory[row, :len(values)] = torch.tensor(values, dtype=torch.long)
    with torch.no_grad():
        final = run_soft(compile_program(code, config), one_hot_state(config, len(code), registers, memory),
                         config, prune=True)
    return final.memory[:, layout.answer_cells(width), :2]


def soft_answer_bits(source: str, pairs: list[Instance], width: int) -> torch.Tensor:
    """add2's (B, width + 1, 2): the distribution of each answer bit after a soft run of `source`."""
    return soft_answer(ADD2, source, pairs, width)


def run_on_interpreter(layout: Layout, source: str, instance: Instance) -> str:
    """The program's answer on the interpreter, as the task writes it."""
    width = layout.width(instance)
    config = layout.config(width)
    code = assemble(source, config.registers)
    memory = dict(enumerate(layout.memory(instance, width)))
    state = run_discrete(code, config, initial_state(config, layout.registers(instance, width), memory))
    if not state.halted:
        raise DfstError("the selected library program did not halt")
    return layout.read(state, instance, width)


def discrete_answer(source: str, instance: Instance) -> str:
    """add2: the program's answer on the interpreter, binary, most significant first."""
    return run_on_interpreter(ADD2, source, instance)


def train_selector(task: Task, config: dict,
                   seed: int) -> tuple[torch.Tensor, set[tuple[str, str]], list[float]]:
    """Selection logits trained on answers alone; the operand pairs seen, and the top weight per step."""
    layout, candidates = TASKS[task.name]
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    logits = torch.nn.Parameter(torch.zeros(len(candidates)))
    optimiser = torch.optim.Adam([logits], lr=config["lr"])
    seen, trace, width = set(), [], config["max_train_digits"]
    for _ in range(config["max_steps"]):
        pairs = sample_pairs(task, rng, config["batch"], width)
        outputs = torch.stack([soft_answer(layout, source, pairs, width)
                               for source in candidates.values()])                    # (K, B, cells, 2)
        target = torch.tensor([layout.target(p, width) for p in pairs])
        mixture = torch.einsum("k,kbwv->bwv", logits.softmax(0), outputs)
        loss = torch.nn.functional.nll_loss(mixture.clamp_min(1e-9).log().flatten(0, 1), target.flatten())
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        seen.update((p.a, p.b) for p in pairs)
        trace.append(round(float(logits.detach().softmax(0).max()), 4))
        if trace[-1] >= config["confidence"]:
            break
    return logits.detach(), seen, trace


def run(task: Task, *, seed: int = 0, config: dict | None = None, progress: bool = True) -> Result:
    """Train the selector on `task` (add2 or sort2) and score the selected program on the DFST protocol."""
    if task.name not in TASKS:
        raise DfstError(f"the library model has compiled programs for {' and '.join(TASKS)} only")
    layout, candidates = TASKS[task.name]
    config = merge_config(config or {}, DEFAULTS, "library-model")
    config["eval_digits"] = str(config["eval_digits"] or layout.eval_digits)
    with deterministic(config["threads"]):
        started = time.process_time()
        logits, seen, trace = train_selector(task, config, seed)
        seconds, where = time.process_time() - started, hardware()
    chosen = list(candidates)[int(logits.argmax())]
    digits = [int(d) for d in config["eval_digits"].split(",")]
    scores = evaluate_predictor(
        task, lambda batch: [run_on_interpreter(layout, candidates[chosen], i) for i in batch],
        digits, random=config["random"], seed=seed, trained_on=seen)
    return Result(
        system=SYSTEM, task=task.name, seed=seed, samples=len(seen), params=len(candidates),
        max_train_digits=config["max_train_digits"], robust_lg=scores["robust_lg"],
        probabilistic_lg=scores["probabilistic_lg"], train_seconds=round(seconds, 3), hardware=where,
        levels=scores["levels"], config=config,
        notes="a softmax selecting a compiled library program, trained on answers through the soft "
              f"machine; exactness is the compiled {chosen}'s, the learned part is the choice of program",
        details={"selected": chosen, "selection": dict(zip(candidates, logits.softmax(0).tolist())),
                 "selection_trace": trace})
