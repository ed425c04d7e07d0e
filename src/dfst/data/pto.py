"""PTO datasets: record the expert's policy-trajectory observations and store them in one file.

A policy-trajectory observation (PTO) is what an observer sees of one run of an agent: per step the
symbol read, the symbol written and the move (index into `MOVES`: U, D, L, R, S). It is exactly the
trace `run_table(..., record=True)` returns. The expert's hidden states are never stored: a learner
has to infer them. Every trace ends with the halting move S, and S occurs nowhere else.

Sampling rule ("uniform-lengths"): with `rng = numpy.random.default_rng(seed)`, each sample in turn
draws the two operand lengths independently and uniformly from [min_digits, max_digits]
(`rng.integers(min_digits, max_digits + 1, size=2)`), then the instance, `task.random_instance(rng, n, m)`
(for the arithmetic tasks the first operand, then the second, each `random_operand(rng, length, base)`:
uniform digits, a non-zero leading digit; a task's own `generate` otherwise). The same task, samples,
min_digits, max_digits and seed always give the same dataset.

File format (version 1), conventionally named `*.pto.zip`: a zip archive, deflated (a member that would
inflate more than the readers' 400x zip-bomb ratio, such as the moves of very long runs, is stored),
with a fixed date, fixed permissions and this member order, so that one dataset always gives the same
bytes:

    meta.json    {"format": "dfst-pto", "version": 1, "task", "base", "k", "d", "seed",
                  "sampling": {"rule", "min_digits", "max_digits"}, "samples", "steps",
                  "alphabet": [k symbol names], "moves": ["U", "D", "L", "R", "S"],
                  "operands": [[a, b], ...], "dfst_version"}   (sorted keys, no timestamps)
                 (+ "agent": the agent JSON, for PTOs of a user's agent: `dfst data --agent`)
    reads.npy    uint8 (steps,)     symbol read, all samples concatenated
    writes.npy   uint8 (steps,)     symbol written
    moves.npy    uint8 (steps,)     move index
    offsets.npy  int64 (samples+1,) sample i is steps offsets[i]:offsets[i+1]

k and d are the expert's numbers of symbols and states, kept for reference only. Arrays are plain
`.npy` files and are loaded with `allow_pickle=False`; `load_dataset` checks everything and raises a
one-line `DfstError` on any damage. `dataset_instances` checks more: each PTO is the expert's own run.
`record_dataset_file` and `inspect_dataset` are what `dfst data` and `dfst data --inspect` do.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import dfst
from dfst.automata import MOVES, STOP
from dfst.errors import DfstError
from dfst.grid.rollout import run_table
from dfst.grid.world import Outcome
from dfst.io.inputs import parse_json, read_zip_members, zip_members
from dfst.io.limits import MAX_ZIP_RATIO, ZIP_RATIO_FLOOR
from dfst.io.outputs import check_output_file, write_atomic
from dfst.tasks.base import Instance, Task
from dfst.tasks.own_agent import reference_json

FORMAT = "dfst-pto"
VERSION = 1
CHANNELS = ("reads", "writes", "moves")  # the PTO schema: the columns of a trace, in order
MEMBERS = ("meta.json", *(f"{c}.npy" for c in CHANNELS), "offsets.npy")
SAMPLING_RULE = "uniform-lengths"
META_KEYS = ("format", "version", "task", "base", "k", "d", "seed", "sampling", "samples", "steps",
             "alphabet", "moves", "operands", "dfst_version")
_DATE = (1980, 1, 1, 0, 0, 0)  # the earliest date zip can store; fixed so files are reproducible


@dataclass(frozen=True, eq=False)
class PtoDataset:
    """PTOs of one task's expert; sample i is steps offsets[i]:offsets[i+1] of reads/writes/moves."""

    task: str
    base: int
    k: int  # the expert's number of symbols
    d: int  # the expert's number of states (for reference; states are not stored)
    seed: int
    sampling: dict
    operands: list[tuple[str, str]]
    reads: np.ndarray  # uint8 (steps,)
    writes: np.ndarray  # uint8 (steps,)
    moves: np.ndarray  # uint8 (steps,)
    offsets: np.ndarray  # int64 (samples + 1,)
    alphabet: tuple[str, ...]  # symbol names; index == symbol value in reads/writes
    agent: dict | None = None  # the agent JSON recorded, when it is not the task's expert (--agent)

    @property
    def samples(self) -> int:
        return len(self.offsets) - 1

    @property
    def steps(self) -> int:
        return len(self.reads)

    def trace(self, i: int) -> np.ndarray:
        """Sample i as run_table records it: (T_i, 3) uint8 of read, write, move."""
        i = range(self.samples)[i]  # IndexError when out of range; negative indices count back
        lo, hi = self.offsets[i], self.offsets[i + 1]
        return np.stack([self.reads[lo:hi], self.writes[lo:hi], self.moves[lo:hi]], axis=1)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PtoDataset):
            return NotImplemented
        return _meta(self) == _meta(other) and all(
            a.dtype == b.dtype and np.array_equal(a, b) for a, b in zip(_arrays(self), _arrays(other)))


def record_dataset(task: Task, samples: int, max_digits: int, seed: int, min_digits: int = 1,
                   progress: Callable[[int], None] | None = None) -> PtoDataset:
    """Record `samples` expert runs on operands drawn by the sampling rule in the module docstring.

    `progress`, if given, is called after each sample with the number of samples recorded so far.
    """
    if samples < 1:
        raise DfstError(f"need at least 1 sample, got {samples}")
    if not 1 <= min_digits <= max_digits:
        raise DfstError(f"need 1 <= min_digits <= max_digits, got min {min_digits}, max {max_digits}")
    if seed < 0:
        raise DfstError(f"seed must be non-negative, got {seed}")
    rng = np.random.default_rng(seed)
    instances, traces = [], []
    for done in range(1, samples + 1):
        instances.append(sample_instance(task, rng, min_digits, max_digits))
        traces.append(record_run(task, instances[-1]))
        if progress is not None:
            progress(done)
    sampling = {"rule": SAMPLING_RULE, "min_digits": min_digits, "max_digits": max_digits}
    return dataset_of(task, instances, traces, seed, sampling)


def dataset_of(task: Task, instances: list[Instance], traces: list[np.ndarray], seed: int,
               sampling: dict) -> PtoDataset:
    """The dataset of the expert's (or --agent's) `traces` on `instances` (`sampling`: how they were
    chosen)."""
    lengths = np.array([len(t) for t in traces], dtype=np.int64)
    steps = np.concatenate(traces)
    return PtoDataset(
        task=task.name, base=task.base, k=task.agent.k, d=task.agent.d, seed=seed, sampling=sampling,
        operands=[(i.a, i.b) for i in instances], reads=steps[:, 0].copy(), writes=steps[:, 1].copy(),
        moves=steps[:, 2].copy(), offsets=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
        alphabet=task.alphabet, agent=reference_json(task))


def record_dataset_file(task: Task, samples: int, max_digits: int, seed: int, out: str | Path, *,
                        min_digits: int = 1, force: bool = False, max_memory: int | None = None,
                        progress: Callable[[int], None] | None = None,
                        sampler: Callable[[Task, int, int, int], PtoDataset] | None = None) -> dict:
    """`record_dataset` (or `sampler`, one of `dfst.data.SAMPLERS`) into the file `out` (checked
    writable first, so a bad path costs nothing; `force` replaces an earlier dataset), refused beyond
    `max_memory` bytes (default: DFST_MAX_MEMORY, else half the RAM) before any recording. `progress`
    is called with 0 once the checks pass, then as in `record_dataset`. Returns the dataset's
    `summarize` plus "file"."""
    from dfst.io.limits import default_max_memory
    from dfst.tasks.budget import check_recording

    check_output_file(out, force=force)
    if samples >= 1 and 1 <= min_digits <= max_digits:  # else record_dataset says what is wrong
        check_recording(task, samples, max_digits, default_max_memory() if max_memory is None else max_memory)
    if progress is not None:
        progress(0)
    if sampler is None:
        dataset = record_dataset(task, samples, max_digits, seed, min_digits=min_digits, progress=progress)
    else:
        dataset = sampler(task, samples, max_digits, seed)
    save_dataset(dataset, out, overwrite=force)
    return summarize(dataset) | {"file": str(out)}


def sample_instance(task: Task, rng: np.random.Generator, min_digits: int, max_digits: int) -> Instance:
    """The sampling rule: both lengths uniform in [min_digits, max_digits], then a, then b."""
    n, m = rng.integers(min_digits, max_digits + 1, size=2)
    return task.random_instance(rng, int(n), int(m))


def record_run(task: Task, inst: Instance) -> np.ndarray:
    """The expert's (or --agent's) PTO on `inst`; a DfstError if it does not halt."""
    run = run_table(task.agent, task.layout(inst), task.max_steps(inst), record=True)
    if run.outcome != Outcome.HALTED:
        raise DfstError(f"the {task.name} {'agent' if task.reference == 'agent' else 'expert'} did not halt "
                        f"on {inst.a} and {inst.b} "
                        f"({run.outcome} after {run.steps} steps)")
    return run.trace


def save_dataset(ds: PtoDataset, path: str | Path, *, overwrite: bool = False) -> None:
    """Write `ds` as a PTO zip (format above); the same dataset always gives the same bytes. The zip
    is checked as `load_dataset` reads it (dfst.io.inputs: the dataset caps, the zip-bomb ratio) before
    it is written: a dataset dfst could not read back is refused, naming the cap, and nothing is written."""
    path = check_output_file(path, force=overwrite)
    meta = json.dumps(_meta(ds), sort_keys=True, indent=1) + "\n"
    raw = _zip(dict(zip(MEMBERS, [meta.encode(), *(_npy(a) for a in _arrays(ds))])))
    try:
        zip_members(raw, MEMBERS, "dfst PTO dataset", path)
    except DfstError as exc:
        raise DfstError(f"not written, dfst could not read it back: {exc} (record fewer or shorter "
                        "samples)") from None
    write_atomic(path, raw)


def _zip(contents: dict[str, bytes]) -> bytes:
    """The members deflated, in order, with fixed metadata; a member that deflated more than the
    readers' MAX_ZIP_RATIO (the moves of very long runs: one move repeated) is written again stored."""
    raw = _write_zip(contents, stored=set())
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        stored = {info.filename for info in zf.infolist()
                  if info.file_size > ZIP_RATIO_FLOOR and info.file_size > MAX_ZIP_RATIO * info.compress_size}
    return _write_zip(contents, stored) if stored else raw


def _write_zip(contents: dict[str, bytes], stored: set[str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in contents.items():
            info = zipfile.ZipInfo(name, date_time=_DATE)
            info.compress_type = zipfile.ZIP_STORED if name in stored else zipfile.ZIP_DEFLATED
            info.create_system = 3  # "unix", else it depends on the platform writing the file
            info.external_attr = 0o644 << 16
            zf.writestr(info, data, compresslevel=6)
    return buf.getvalue()


def _meta(ds: PtoDataset) -> dict:
    return {"format": FORMAT, "version": VERSION, "task": ds.task, "base": ds.base, "k": ds.k, "d": ds.d,
            "seed": ds.seed, "sampling": ds.sampling, "samples": ds.samples, "steps": ds.steps,
            "alphabet": list(ds.alphabet), "moves": list(MOVES),
            "operands": [list(pair) for pair in ds.operands], "dfst_version": dfst.__version__} | (
                {"agent": ds.agent} if ds.agent is not None else {})


def _arrays(ds: PtoDataset) -> tuple[np.ndarray, ...]:
    return ds.reads, ds.writes, ds.moves, ds.offsets


def _npy(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=False)
    return buf.getvalue()


def load_dataset(path: str | Path) -> PtoDataset:
    """Read and check a PTO zip; any problem is a one-line DfstError naming the file."""
    path = Path(path)
    members = _read_members(path)
    meta = _parse_meta(path, members["meta.json"])
    arrays = [_parse_array(path, members[f"{c}.npy"], c, np.uint8) for c in CHANNELS]
    offsets = _parse_array(path, members["offsets.npy"], "offsets", np.int64)
    ds = PtoDataset(
        task=meta["task"], base=meta["base"], k=meta["k"], d=meta["d"], seed=meta["seed"],
        sampling=meta["sampling"], operands=[(a, b) for a, b in meta["operands"]],
        reads=arrays[0], writes=arrays[1], moves=arrays[2], offsets=offsets,
        alphabet=tuple(meta["alphabet"]), agent=meta.get("agent"))
    _check_consistent(path, ds, meta)
    return ds


def _read_members(path: Path) -> dict[str, bytes]:
    """The five members, read through dfst.io.inputs: a regular file, member count, inflated size and
    ratio caps, no encryption, CRC checked."""
    members = read_zip_members(path, MEMBERS, "dfst PTO dataset")
    if "meta.json" not in members:
        raise DfstError(f"{path} is not a dfst PTO dataset (a zip without meta.json)")
    missing = [m for m in MEMBERS if m not in members]
    if missing:
        raise DfstError(f"{path} is damaged: member {missing[0]} is missing")
    return members


def _parse_meta(path: Path, raw: bytes) -> dict:
    meta = parse_json(raw, f"{path} is damaged: meta.json")  # depth and size caps, no NaN
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        found = meta.get("format") if isinstance(meta, dict) else None
        raise DfstError(f"{path} is not a dfst PTO dataset (format {found!r}, expected {FORMAT!r})")
    if meta.get("version") != VERSION:
        raise DfstError(f"{path}: unsupported dfst PTO dataset version {meta.get('version')!r} "
                        f"(this dfst reads version {VERSION})")
    missing = [key for key in META_KEYS if key not in meta]
    if missing:
        raise DfstError(f"{path} is damaged: meta.json lacks {', '.join(map(repr, missing))}")
    problem = _meta_problem(meta)
    if problem:
        raise DfstError(f"{path} is damaged: meta.json {problem}")
    return meta


def _meta_problem(meta: dict) -> str | None:
    """The first ill-typed field of meta.json, described, or None."""
    for key in ("base", "k", "d", "seed", "samples", "steps"):
        if not isinstance(meta[key], int) or isinstance(meta[key], bool) or meta[key] < 0:
            return f"has {key} = {meta[key]!r}, not a non-negative integer"
    if meta["samples"] < 1:
        return "has samples = 0"
    if not isinstance(meta["task"], str) or not isinstance(meta["sampling"], dict):
        return "has an ill-typed task or sampling"
    alphabet = meta["alphabet"]
    if not isinstance(alphabet, list) or len(alphabet) != meta["k"] or \
            not all(isinstance(s, str) for s in alphabet):
        return f"has an alphabet that is not a list of k = {meta['k']} symbol names"
    if meta["moves"] != list(MOVES):
        return f"has moves {meta['moves']!r}, expected {list(MOVES)!r}"
    ops = meta["operands"]
    if not isinstance(ops, list) or not all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in ops):
        return "has operands that are not a list of [a, b] string pairs"
    if len(ops) != meta["samples"]:
        return f"lists {len(ops)} operand pairs for {meta['samples']} samples"
    if not isinstance(meta.get("agent", {}), dict):
        return "has an agent that is not an agent JSON object"
    return None


def _parse_array(path: Path, raw: bytes, name: str, dtype: type) -> np.ndarray:
    try:
        _check_npy_size(raw)
        array = np.load(io.BytesIO(raw), allow_pickle=False)
    except (ValueError, EOFError, OSError) as exc:
        raise DfstError(f"{path} is damaged: {name}.npy is not a valid array ({exc})") from None
    if not isinstance(array, np.ndarray) or array.ndim != 1 or array.dtype != np.dtype(dtype):
        what = f"{array.dtype} {array.shape}" if isinstance(array, np.ndarray) else type(array).__name__
        raise DfstError(f"{path} is damaged: {name}.npy is {what}, expected 1-D {np.dtype(dtype)}")
    return array


def _check_npy_size(raw: bytes) -> None:
    """The .npy header's shape must fit the bytes after it: np.load allocates the declared shape
    before reading (a 150-byte member declaring 10^11 elements was a MemoryError)."""
    buf = io.BytesIO(raw)
    version = np.lib.format.read_magic(buf)
    readers = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
    if version not in readers:
        raise ValueError(f"unsupported .npy version {version}")
    shape, _, dtype = readers[version](buf)
    size = 1
    for n in shape:
        size *= n
        if n < 0 or size * dtype.itemsize > len(raw):
            raise ValueError(f"shape {shape} does not fit in {len(raw):,} bytes")


def _check_consistent(path: Path, ds: PtoDataset, meta: dict) -> None:
    problem = _array_problem(ds, meta)
    if problem:
        raise DfstError(f"{path} is damaged: {problem}")


def _array_problem(ds: PtoDataset, meta: dict) -> str | None:
    """The first inconsistency between the arrays and meta.json, described, or None."""
    off = ds.offsets
    if not len(ds.reads) == len(ds.writes) == len(ds.moves) == meta["steps"]:
        return (f"reads, writes, moves have {len(ds.reads)}, {len(ds.writes)}, {len(ds.moves)} steps "
                f"but meta.json says {meta['steps']}")
    if len(off) != meta["samples"] + 1:
        return f"offsets has {len(off)} entries for {meta['samples']} samples (expected samples + 1)"
    if off[0] != 0 or off[-1] != ds.steps:
        return f"offsets run from {off[0]} to {off[-1]}, expected 0 to {ds.steps}"
    if np.any(np.diff(off) <= 0):
        return "offsets are not increasing (every sample has at least one step)"
    for name, values, bound in (("reads", ds.reads, ds.k), ("writes", ds.writes, ds.k),
                                ("moves", ds.moves, len(MOVES))):
        if ds.steps and int(values.max()) >= bound:
            return f"{name} has value {int(values.max())}, expected less than {bound}"
    last = ds.moves[off[1:] - 1]
    if np.any(last != STOP):
        return f"sample {int(np.argmax(last != STOP))} does not end with the move S"
    if int(np.count_nonzero(ds.moves == STOP)) != ds.samples:
        return "a sample has the move S before its end"
    return None


def summarize(ds: PtoDataset) -> dict:
    """Plain-JSON statistics of a dataset, for reports and the CLI."""
    lengths = np.diff(ds.offsets)
    digits = [len(x) for pair in ds.operands for x in pair if x] or [0]  # a task of one operand: b is ""
    triples = (ds.reads.astype(np.int64) * ds.k + ds.writes) * len(MOVES) + ds.moves
    counts = np.bincount(ds.moves, minlength=len(MOVES))
    return {
        "task": ds.task, "reference": "task" if ds.agent is None else "agent",
        **({"agent": ds.agent.get("name", "agent")} if ds.agent is not None else {}),
        "base": ds.base, "k": ds.k, "d": ds.d, "seed": ds.seed, "sampling": ds.sampling,
        "samples": ds.samples, "steps": ds.steps,
        "steps_min": int(lengths.min()), "steps_mean": float(lengths.mean()), "steps_max": int(lengths.max()),
        "digits_min": min(digits), "digits_max": max(digits),
        "distinct_triples": int(np.unique(triples).size),
        "moves": {name: int(c) for name, c in zip(MOVES, counts)},
    }


def dataset_instances(task: Task, ds: PtoDataset, source: str = "the dataset") -> list[Instance]:
    """The instances of a PTO dataset, checked: same task, and every stored PTO is the expert's replay
    (so the rules the replay uses are the rules the PTOs exercise)."""
    if ds.task != task.name:
        raise DfstError(f"{source} holds {ds.task} PTOs, not {task.name}")
    if ds.agent != reference_json(task):
        hint = "drop --agent" if ds.agent is None else "give --agent FILE, the agent they were recorded from"
        raise DfstError(f"{source} holds PTOs of {_whose(ds.agent, ds.task)}, not of "
                        f"{_whose(reference_json(task), task.name)} "
                        f"({hint})")
    instances = []
    for i, (a, b) in enumerate(ds.operands):
        try:
            inst = task.check(a, b, "data")
        except DfstError as exc:
            raise DfstError(f"{source}: sample {i}: {exc}") from None
        run = run_table(task.agent, task.layout(inst), task.max_steps(inst), record=True)
        if not np.array_equal(run.trace, ds.trace(i)):
            raise DfstError(f"{source}: sample {i} ({a}, {b}) is not {_whose(ds.agent, task.name)}'s run")
        instances.append(inst)
    return instances


def inspect_dataset(path: str | Path) -> dict:
    """The dataset's summary, after the checks `dfst coverage` and `dfst train --data` make: the
    task's operands, every PTO the expert's own run (a dataset of a task this dfst lacks: unchecked)."""
    from dfst.tasks import TASKS

    dataset = load_dataset(path)
    if dataset.task in TASKS:
        dataset_instances(dataset_task(dataset, f"dataset {path}"), dataset, f"dataset {path}")
    return summarize(dataset) | {"expert_runs_checked": dataset.task in TASKS}


def dataset_task(ds: PtoDataset, source: str = "the dataset") -> Task:
    """The task whose PTOs `ds` holds: the registered one, with the recorded agent as its expert."""
    from dfst.tasks import get_task
    from dfst.tasks.own_agent import agent_task_from_dict

    task = get_task(ds.task)
    return task if ds.agent is None else agent_task_from_dict(task, ds.agent, f"the agent of {source}")


def _whose(agent: dict | None, task: str) -> str:
    return f"the {task} expert" if agent is None else f"agent {agent.get('name', 'agent')!r}"
