"""`dfst library experiment NAME`'s one entry: seed 002's experiments (depth, ops, llm), each checked
before any work, run on one thread, and saved as JSON under the output directory and a figure."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from dfst.errors import DfstError

NAMES = ("depth", "ops", "llm")


@dataclass(frozen=True)
class ExperimentOptions:
    """Every experiment's settings (`dfst library experiment --help` says which reads which)."""

    base: int = 128
    depths: tuple[int, ...] = (1, 2, 3, 4, 5, 6)
    epochs: int = 30
    train_samples: int = 0  # 0: all
    test_samples: int = 0  # 0: all
    router: str = "slots"
    out: str = "results/library"
    width: int = 6
    test_pairs: int = 500
    sentences: int = 6000
    lr: float = 1e-3
    llama_dir: str = ""
    signal: str = "answer"
    plot: str = ""  # "": docs/img/library_NAME[_SIGNAL].png
    force: bool = False


@dataclass(frozen=True)
class Saved:
    """What an experiment gave and where it was written."""

    result: dict
    json_path: Path
    plot_path: Path


def run_experiment(name: str, options: ExperimentOptions,
                   progress: Callable[[dict], None] | None = None) -> Saved:
    """Run experiment `name` (NAMES) with `options`; `progress` gets llm's rows, one an epoch."""
    if options.epochs < 1:  # every experiment: its JSON and figure are per epoch
        raise DfstError(f"--epochs must be at least 1, got {options.epochs}")
    if not (math.isfinite(options.lr) and options.lr > 0):  # inf or nan would train to nan weights
        raise DfstError(f"--lr must be a positive finite number, got {options.lr}")
    if name not in NAMES:
        raise DfstError(f"no library experiment {name!r}; choose depth, ops or llm")
    return {"depth": _depth, "ops": _ops, "llm": _llm}[name](options, progress)


def _depth(o: ExperimentOptions, progress) -> Saved:
    """Experiment (b): fib at each recursion depth, seed 002's Table 1."""
    from dfst.baselines.library.experiment import run_depth_table
    from dfst.baselines.library.plot import plot_depth

    if o.train_samples < 0 or o.test_samples < 0:
        raise DfstError(f"--train-samples and --test-samples must be at least 0 (0: all), got "
                        f"{o.train_samples} and {o.test_samples}")
    suffix = "" if o.router == "slots" else f"_{o.router}"
    paths = _outputs(o, f"depth_b{o.base}{suffix}.json", "docs/img/library_depth.png")
    return _saved(paths, plot_depth, lambda: run_depth_table(
        o.base, list(o.depths), o.epochs, o.train_samples or None, router=o.router,
        test_samples=o.test_samples or None))


def _ops(o: ExperimentOptions, progress) -> Saved:
    """Experiment (a): a subtraction table against a circuit, both arms."""
    from dfst.baselines.library.ops_experiment import OpsConfig, run_ops
    from dfst.baselines.library.plot import plot_ops

    if not 2 <= o.width <= 8:
        raise DfstError(f"--width {o.width} is outside 2..8 (the table has 8**width entries)")
    if o.test_pairs < 1:
        raise DfstError("--epochs and --test-pairs must be at least 1")
    paths = _outputs(o, f"ops_w{o.width}.json", "docs/img/library_ops.png")
    return _saved(paths, plot_ops, lambda: run_ops(OpsConfig(width=o.width, epochs=o.epochs,
                                                             test_pairs=o.test_pairs)))


def _llm(o: ExperimentOptions, progress) -> Saved:
    """Experiment (c): a minimal LLaMA using the mod-n calculator (needs dfst[library-llm])."""
    from dfst.baselines.library.llm import LlmConfig, check_llama_dir, run_llm
    from dfst.baselines.library.llm_data import TEMPLATES
    from dfst.baselines.library.plot import plot_llm

    config = LlmConfig(base=o.base, sentences=o.sentences, epochs=o.epochs, lr=o.lr, llama_dir=o.llama_dir,
                       signal=o.signal)
    if not 2 <= config.base <= 256:
        raise DfstError("--base must be 2..256 and --epochs at least 1")
    if not 10 <= config.sentences <= len(TEMPLATES) * config.base ** 2:
        raise DfstError(f"--sentences must be 10..{len(TEMPLATES) * config.base ** 2} at base {config.base}")
    if config.llama_dir:  # before the outputs: a bad --llama-dir is the one error to report
        check_llama_dir(config.llama_dir)
    suffix = "" if o.signal == "answer" else f"_{o.signal.replace('-', '_')}"
    paths = _outputs(o, f"llm{suffix}.json", f"docs/img/library_llm{suffix}.png")
    return _saved(paths, plot_llm, lambda: run_llm(config, progress=progress))


def _outputs(o: ExperimentOptions, json_name: str, default_plot: str) -> tuple[Path, Path]:
    """The JSON file under `o.out` and the figure, both checked (and claimed) before any work."""
    from dfst.io.outputs import check_output_file, make_directory

    json_path = check_output_file(make_directory(Path(o.out)) / json_name, force=o.force)
    return json_path, check_output_file(o.plot or default_plot, force=o.force)


def _saved(paths: tuple[Path, Path], plot: Callable[[dict, Path], None], run: Callable[[], dict]) -> Saved:
    from dfst.io.outputs import write_json

    with torch_single_thread():
        result = run()
    write_json(paths[0], result)
    plot(result, paths[1])
    return Saved(result, *paths)


@contextmanager
def torch_single_thread() -> Iterator[None]:
    """One thread while the experiment runs: its numbers then repeat exactly on a machine of the same
    kind. Torch's global settings are restored after, so that a caller in the same process (a test,
    a notebook) keeps its threads and IEEE subnormals."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    torch.set_flush_denormal(True)  # values far below 1e-38 slow the CPU tenfold and change nothing
    try:
        yield
    finally:
        torch.set_flush_denormal(False)  # torch's default; it has no getter to restore from
        torch.set_num_threads(threads)
