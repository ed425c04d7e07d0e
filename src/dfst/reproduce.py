"""Train every task over seeds with its recipe, evaluate with the protocol, store and tabulate.

Per (task, seed): `dfst.train` with `run_config(task, seed)`, what `dfst train TASK --seed SEED`
trains (the recipe, its fine-tuning phase included), into RUNS/<task>/s<seed>, then on each model
of the run the length-generalisation protocol (hard instances + 10 random pairs per length, plain h
unless `rescale`, lengths 10, 100, 1,000, then ×10 until the first failure or the task's target
length) and `dfst certify` in the same mode: "DFST" is RUN/model (the weights
gradient descent made, fine-tuned), "DFST (before fine-tuning)" RUN/trained (training's weights; only
in a run with the phase) and "DFST (extracted)" RUN/extracted (the automaton read off the trained
weights, an exact DFST). Each becomes a `dfst.results.Result` stored as JSON, which `dfst table`
reads too. A seed whose results exist is not trained again.

A stored result carries its key: the sha256 of everything that determines it (the full TrainConfig,
the evaluation protocol, RESULT_SCHEMA) and those inputs themselves. A result stored under another
key is never reused silently: `reproduce` refuses, naming the fields that differ, unless told to
train and evaluate again (`rerun`, replacing dfst's own stale result and run) or to use the stored
results as they are (`accept_stored`, said on stderr). Results from before keys hold their
TrainConfig as "config" and were evaluated with the default protocol; they are matched on those.
The results directory is locked for the whole run (`dfst.run_guard`), each training run by `train`.
"""

from __future__ import annotations

import hashlib
import json
import math
import statistics
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from dfst.baselines.common import hardware
from dfst.certify.saved import certify_checkpoint
from dfst.checkpoint import load_checkpoint
from dfst.errors import DfstError
from dfst.evaluate import EvalConfig, run_protocol
from dfst.inputs import read_json_file
from dfst.limits import check_work
from dfst.outputs import file_kind, remove_stale_temporaries, rewrite_between, write_atomic
from dfst.recipes import RECIPES, TARGET_DIGITS, recipe
from dfst.results import Result, result_bytes
from dfst.results.certified import certified_counts, certified_text
from dfst.rollout import DfstWeights
from dfst.run_guard import FORCE_HINT, run_lock
from dfst.tasks.hard import hard_set_version
from dfst.train import TrainConfig, train
from dfst.train.batches import dataset_sha256
from dfst.train.config import EvaluationConfig, LoggingConfig
from dfst.train.loop import training_data
from dfst.train.rundir import check_run_dir, check_run_files, run_differences

SYSTEMS = {"DFST": "model", "DFST (before fine-tuning)": "trained", "DFST (extracted)": "extracted"}
RESULT_SCHEMA = 1  # bump when what a stored result holds, or how it is computed, changes
# The evaluation settings a stored key may lack (added since): what they were before they existed.
EVAL_BEFORE = {"certify": False, "hard_set": 1}
DEFAULT_TIME_BUDGET = 300.0
MARK_START, MARK_END = "<!-- reproduce:start -->", "<!-- reproduce:end -->"
COLUMNS = ("task", "system", "seeds", "samples", "max train digits", "d", "params", "robust at target",
           "robust LG (median, min)", "probabilistic LG (median)", "first failing length",
           "certified (all lengths / bounded / none)", "CPU s/seed (median, max)")


def eval_protocol(task: str, time_budget: float = DEFAULT_TIME_BUDGET, *, certify: bool = True,
                  rescale: bool = False) -> dict:
    """The length-generalisation protocol a result is evaluated with (plain JSON): h plain (or
    rescaled); `certify`: each model is also given to `dfst certify` in the same mode."""
    return {"digits": [10, 100, 1000], "random": 10, "rescale": rescale, "until_fail": True,
            "ladder_factor": 10.0, "target_digits": TARGET_DIGITS[task], "time_budget": time_budget,
            "certify": certify, "hard_set": hard_set_version(task)}


def run_config(task: str, seed: int, overrides: dict | None = None) -> TrainConfig:
    """What `dfst train TASK --seed SEED` trains, with `overrides`: the recipe, watched as dfst train
    watches a run (the evaluation and logging groups' defaults), so that reproduce and dfst train
    make the same run directory and either can finish the other's."""
    watched = replace(recipe(task, seed), evaluation=EvaluationConfig(), logging=LoggingConfig())
    return replace(watched, **(overrides or {}))


def systems_of(cfg: TrainConfig) -> dict[str, str]:
    """The systems a run of `cfg` gives, with the checkpoint of each: the before-fine-tuning row only
    where the run fine-tunes. A run of a user's agent (`--agent`) names it: "DFST [agent xor]"."""
    mark = "" if cfg.agent is None else f" [agent {agent_tag(cfg)}]"
    return {system + mark: sub for system, sub in SYSTEMS.items() if cfg.finetune or sub != "trained"}


def agent_tag(cfg: TrainConfig) -> str | None:
    """The name a run of a user's agent goes by in file names and tables: its file's stem."""
    return None if cfg.agent is None else Path(cfg.agent).name.removesuffix(".json")


def run_name(cfg: TrainConfig) -> str:
    """The task, or `task@agent` for a user's agent: its runs and results never meet the expert's."""
    return cfg.task if cfg.agent is None else f"{cfg.task}@{agent_tag(cfg)}"


def result_key(cfg: TrainConfig, protocol: dict) -> dict:
    """{"sha256", "schema", "train", "eval"}: everything that determines a stored result."""
    body = {"schema": RESULT_SCHEMA, "train": cfg.to_dict(), "eval": protocol}
    digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
    return {"sha256": digest, **body}


def stored_key(result: Result, task: str) -> dict:
    """The key a stored result carries; one from before keys: its config, the protocol of then (h
    rescaled, no certification)."""
    if result.key is not None:
        return result.key
    return {"schema": RESULT_SCHEMA, "train": result.config,
            "eval": eval_protocol(task, certify=False, rescale=True)}


def key_differences(old: dict, new: dict) -> list[str]:
    """`field=stored, not wanted` for every input in which a stored key differs from `new`. A
    TrainConfig field the stored config lacks (added since) counts as its default, an evaluation
    setting as `EVAL_BEFORE` says."""
    defaults = TrainConfig().to_dict()
    differences = [] if old.get("schema") == new["schema"] else [f"schema={old.get('schema')!r}, not "
                                                                 f"{new['schema']!r}"]
    for part, base in (("train", defaults), ("eval", EVAL_BEFORE)):
        stored = old.get(part) if isinstance(old.get(part), dict) else {}
        stored = base | stored
        differences += [f"{part}.{name}={stored.get(name)!r}, not {value!r}"
                        for name, value in new[part].items() if stored.get(name) != value]
    return differences


def result_path(results: Path, name: str, seed: int, sub: str) -> Path:
    """The result of the checkpoint `sub` of run `name` (`run_name`) and seed."""
    suffix = "" if sub == "model" else f"-{sub}"
    return results / f"{name}{suffix}-s{seed}.json"


def evaluate_checkpoint(directory: Path, task: str, protocol: dict) -> tuple[dict, int]:
    """The protocol up to the task's target, against the answers of the agent the checkpoint imitates
    (the task's own, for the expert); returns the report and the first failing length (0: none)."""
    from dfst.tasks.own_agent import checkpoint_task

    model, config = load_checkpoint(directory, expect_task=task)
    cfg = EvalConfig(digits=tuple(protocol["digits"]), random=protocol["random"], rescale=protocol["rescale"],
                     until_fail=protocol["until_fail"], ladder_factor=protocol["ladder_factor"],
                     max_digits=protocol["target_digits"], time_budget=protocol["time_budget"])
    report, _ = run_protocol(checkpoint_task(config), DfstWeights.of(*model.numpy_weights()), cfg)
    failing = next((lv["digits"] for lv in report["levels"] if not lv["robust"]), 0)
    return report, failing


def reproduce_seed(task: str, seed: int, runs: Path, results: Path, *,
                   time_budget: float = DEFAULT_TIME_BUDGET, certify: bool = True, rescale: bool = False,
                   overrides: dict | None = None, rerun: bool = False, accept_stored: bool = False,
                   warn: Callable[[str], None] | None = None,
                   progress: Callable[[dict], None] | None = None) -> list[Result]:
    """Train and evaluate one seed, or read its stored results when their key is this one's.
    `progress` gets training's records (`dfst.train.train`'s) and {"stage": ...} before each model's
    evaluation."""
    cfg, key, paths = _seed_files(task, seed, results, overrides, time_budget, certify, rescale)
    stored = _settle(task, seed, key, paths, rerun=rerun, accept_stored=accept_stored, warn=warn)
    if stored is not None:
        return stored
    run = runs / run_name(cfg) / f"s{seed}"
    start = time.process_time()
    data = training_data(cfg)
    resume = _resumable(run, cfg, dataset_sha256(data), rerun)
    summary = train(cfg, run, data=data, resume=resume, command=f"dfst reproduce --tasks {task}",
                    progress=progress)
    # the run's own count covers its resumed segments too; a run from before it existed: measure here
    cpu = summary.get("cpu_seconds", time.process_time() - start)
    results = []
    for system, sub in systems_of(cfg).items():
        if progress is not None:
            progress({"stage": f"evaluating{' and certifying' if certify else ''} {system}"})
        results.append(_result(system, sub, run, cfg, key, summary, cpu))
    for result in results:
        write_atomic(paths[result.system], result_bytes(result))
    return results


def settled_seed(task: str, seed: int, results: Path, *, time_budget: float = DEFAULT_TIME_BUDGET,
                 certify: bool = True, rescale: bool = False, overrides: dict | None = None,
                 rerun: bool = False, accept_stored: bool = False,
                 warn: Callable[[str], None] | None = None) -> list[Result] | None:
    """What `reproduce_seed` returns without training (its stored results), None where it would train,
    or its DfstError for results stored under another key (without `rerun` or `accept_stored`): what
    an executor decides before it sends a cell anywhere."""
    _, key, paths = _seed_files(task, seed, results, overrides, time_budget, certify, rescale)
    return _settle(task, seed, key, paths, rerun=rerun, accept_stored=accept_stored, warn=warn)


def _settle(task: str, seed: int, key: dict, paths: dict[str, Path], *, rerun: bool, accept_stored: bool,
            warn: Callable[[str], None] | None) -> list[Result] | None:
    """The stored results of a seed if they are to be used (see `reproduce_seed`), else None."""
    for path in paths.values():  # temporary files of a write cut short by a kill (we hold the lock)
        if file_kind(path.parent) == "directory":  # a sweep's cell directory exists once it ran
            remove_stale_temporaries(path.parent, (path.name,))
    stored, stale = _stored(task, seed, key, paths)
    if len(stored) == len(paths) and (not stale or accept_stored):
        if stale and warn is not None:
            warn(f"{task} seed {seed}: using the stored results as they are (--accept-stored), made with "
                 + "; ".join(next(iter(stale.values()))[:3]))
        return list(stored.values())
    if stale and not rerun:
        system, diff = next(iter(stale.items()))
        raise DfstError(f"{paths[system]} was stored with {'; '.join(diff[:3])}; pass --rerun to train and "
                        "evaluate again, or --accept-stored to use the stored results as they are")
    return None


def _seed_files(task: str, seed: int, results: Path, overrides: dict | None, time_budget: float,
                certify: bool, rescale: bool) -> tuple[TrainConfig, dict, dict[str, Path]]:
    """The config of a seed, the key its results carry, and each system's result file."""
    cfg = run_config(task, seed, overrides)
    key = result_key(cfg, eval_protocol(task, time_budget, certify=certify, rescale=rescale))
    name, subs = run_name(cfg), systems_of(cfg)
    return cfg, key, {system: result_path(results, name, seed, sub) for system, sub in subs.items()}


def _stored(task: str, seed: int, key: dict, paths: dict[str, Path]) -> tuple[dict, dict]:
    """({system: stored result}, {system: its key's differences from `key`}) of the files there."""
    stored = {system: read_result(path, task, seed, system) for system, path in paths.items()
              if file_kind(path) != "missing"}
    stale = {system: diff for system, record in stored.items()
             if (diff := key_differences(stored_key(record, task), key))}
    return stored, stale


def read_result(path: Path, task: str, seed: int, system: str) -> Result:
    """A stored result of dfst's for (task, seed, system); anything else there is a DfstError."""
    record = read_json_file(path, f"cannot read {path}")
    if not (isinstance(record, dict) and (record.get("system"), record.get("task"), record.get("seed"))
            == (system, task, seed)):
        raise DfstError(f"{path} is not dfst's {system} result of {task} seed {seed}; dfst leaves it alone "
                        "(move it away or use another --results)")
    return Result.from_dict(record, str(path))


def _resumable(run: Path, cfg: TrainConfig, data_sha256: str, rerun: bool) -> bool:
    """Whether `train` may resume `run`: it holds this config's run on this data, intact (or none). A
    different or damaged run is started over with `rerun` and refused without it. The data can
    differ under the same config when a task's hard set (the cover's pool) changed."""
    old = check_run_dir(run)
    if old is None:
        return True
    problems = run_differences(old, cfg.to_dict())
    if old.get("data", {}).get("sha256") != data_sha256:
        problems.append("training data sampled from another version of the task (its hard set)")
    if not problems:
        try:
            check_run_files(run, old)
        except DfstError as exc:
            problems = [str(exc).removesuffix(FORCE_HINT)]
    if problems and not rerun:
        raise DfstError(f"{run} holds another run ({problems[0]}); pass --rerun to train it again")
    return not problems


def _result(system: str, sub: str, run: Path, cfg: TrainConfig, key: dict, summary: dict,
            cpu: float) -> Result:
    """The stored result of one system of a trained seed: evaluated with `key`'s protocol."""
    protocol = key["eval"]
    directory = run / sub
    report, failing = evaluate_checkpoint(directory, cfg.task, protocol) if directory.exists() else ({}, 0)
    details = {"first_failing_digits": failing, "stopped_by": report.get("stopped_by", "no_model"),
               "target_digits": protocol["target_digits"], "train_cpu_seconds": round(cpu, 1),
               "iterations": summary["iterations"], "restart": summary["restarts"]["chosen"],
               "d": summary["d"], "extracted": summary.get("extracted")}
    if protocol.get("certify") and directory.exists():
        details["certified"] = certification(directory, cfg.task, protocol["rescale"])
    if sub == "model" and "finetune" in summary:  # the phase may grow d, and may have failed
        details["finetune"] = {key: summary["finetune"].get(key) for key in ("d", "error", "cpu_seconds")}
    return Result(
        system=system, task=cfg.task, seed=cfg.seed, samples=summary["samples"], params=summary["params"],
        max_train_digits=cfg.max_digits, robust_lg=report.get("robust_max_digits", 0),
        probabilistic_lg=report.get("probabilistic_max_digits", 0), train_seconds=round(cpu, 1),
        hardware=hardware(), levels=report.get("levels", []), config=cfg.to_dict(), details=details,
        notes="exact automaton read off the trained DFST" if sub == "extracted" else "", key=key)


def certification(directory: Path, task: str, rescale: bool) -> dict:
    """`dfst certify` of a checkpoint, as a result keeps it: the verdict, the bound in digits (None:
    every length, when CERTIFIED), whether the independent checker accepted the certificate."""
    report, _ = certify_checkpoint(directory, task=task, rescale=rescale)
    return {"verdict": report["verdict"], "max_digits": report.get("max_digits"),
            "checker": report.get("checker"), "seconds": report["seconds"]}


def reproduce(plan: dict[str, list[int]], runs: Path, results: Path, *,
              time_budget: float = DEFAULT_TIME_BUDGET, certify: bool = True, rescale: bool = False,
              overrides: dict | None = None,
              on_seed: Callable[[str, int, list[Result]], None] | None = None,
              progress: Callable[[str, dict], None] | None = None,
              rerun: bool = False, accept_stored: bool = False, warn: Callable[[str], None] | None = None,
              command: str = "dfst reproduce", executor: str = "serial", address: str | None = None,
              workers: int | None = None, on_cells: Callable[[int, int, int, int], None] | None = None,
              on_failure: Callable[[str], None] | None = None) -> list[dict]:
    """Every task of `plan` over its seeds; returns the summary rows of `summary_rows`. `progress(label,
    record)`: a seed's training records and evaluation stages (label "add2 seed 3"). With executor
    "ray" the seeds still to train run as Ray tasks (`dfst.executors`; `on_cells` hears done, running,
    failed, total); a seed that fails twice is told to `on_failure` and left out of the rows."""
    found = []
    with run_lock(results, command):  # one writer of these result files at a time
        if executor != "serial":
            for task, seed, got in _seeds_as_cells(plan, runs, results, executor, address, workers, on_cells,
                                                   on_failure, warn, time_budget=time_budget, certify=certify,
                                                   rescale=rescale, overrides=overrides, rerun=rerun,
                                                   accept_stored=accept_stored):
                found += got
                if on_seed is not None:
                    on_seed(task, seed, got)
            return summary_rows(found)
        for task, seeds in plan.items():
            for seed in seeds:
                got = reproduce_seed(task, seed, runs, results, time_budget=time_budget, certify=certify,
                                     rescale=rescale, overrides=overrides, rerun=rerun,
                                     accept_stored=accept_stored, warn=warn,
                                     progress=_labelled(progress, f"{task} seed {seed}"))
                found += got
                if on_seed is not None:
                    on_seed(task, seed, got)
    return summary_rows(found)


def _seeds_as_cells(plan, runs, results, executor, address, workers, on_cells, on_failure, warn, *,
                    time_budget, certify, rescale, overrides, rerun, accept_stored):
    """(task, seed, results) of every seed of `plan` that did not fail, in the plan's order: the stored
    ones read here, the others run by `executor` (each a `dfst.cells.Cell` over the shared runs and
    results directories)."""
    from dfst.cells import Cell, run_all

    options = tuple(sorted((overrides or {}).items()))
    cells = [Cell(task, seed, (), options, time_budget, certify, rescale, runs=str(runs),
                  results=str(results), rerun=rerun, accept_stored=accept_stored)
             for task, seeds in plan.items() for seed in seeds]
    outcomes, _ = run_all(cells, executor=executor, address=address, workers=workers, on_update=on_cells,
                          warn=warn)
    for i, cell in enumerate(cells):
        outcome = outcomes[i]
        if outcome.error is not None:
            if on_failure is not None:
                on_failure(f"{cell.task} seed {cell.seed}: {outcome.error} (tried {outcome.attempts} times)")
            continue
        where = f"{cell.task} seed {cell.seed}"
        yield cell.task, cell.seed, [Result.from_dict(record, where) for record in outcome.value]


def _labelled(progress: Callable[[str, dict], None] | None, label: str) -> Callable[[dict], None] | None:
    return None if progress is None else (lambda record: progress(label, record))


def grown_d(results: list[Result]) -> list[int] | None:
    """[min, max] of the d the fine-tuning phase grew the model to (one dimension per block read off),
    over the seeds where it grew; None where it never did."""
    pairs = [(r.details.get("finetune") or {}).get("d") for r in results]
    grown = [after for pair in pairs if pair for before, after in [pair] if after != before]
    return [min(grown), max(grown)] if grown else None


def summary_rows(results: list[Result]) -> list[dict]:
    """One row per (task, system): successes over seeds, robust / probabilistic LG, CPU per seed."""
    groups: dict[tuple[str, str], list[Result]] = {}
    for r in results:
        groups.setdefault((r.task, r.system), []).append(r)
    rows = []
    for (task, system), runs in groups.items():
        target = TARGET_DIGITS[task]
        failing = [r.details["first_failing_digits"] for r in runs if r.details["first_failing_digits"]]
        rows.append({
            "task": task, "system": system, "seeds": len(runs), "samples": runs[0].samples,
            "max_train_digits": runs[0].max_train_digits, "d": runs[0].details["d"],
            "d_grown": grown_d(runs),
            "params": runs[0].params, "target_digits": target,
            "successes": sum(r.robust_lg >= target for r in runs),
            "robust_lg_median": statistics.median(r.robust_lg for r in runs),
            "robust_lg_min": min(r.robust_lg for r in runs),
            "probabilistic_lg_median": statistics.median(r.probabilistic_lg for r in runs),
            "first_failing_min": min(failing) if failing else None,
            "certified": certified_counts(runs),
            "cpu_seconds_median": round(statistics.median(r.train_seconds for r in runs), 1),
            "cpu_seconds_max": round(max(r.train_seconds for r in runs), 1),
        })
    return rows


# ----------------------------------------------------------------------------- the command's pieces


def seed_plan(tasks: str, seeds: int, first_seed: int) -> dict[str, list[int]]:
    """`--tasks add2,mult10:1,add10:3-5` with --seeds 10 -> {"add2": seeds 0-9, "mult10": seed 0,
    "add10": seeds 3-5} (counts from first_seed; A-B is the seeds A to B)."""
    if seeds < 1 or first_seed < 0:
        raise DfstError(f"need --seeds >= 1 and --first-seed >= 0, got {seeds} and {first_seed}")
    plan, unknown = {}, []
    for item in filter(None, (t.strip() for t in tasks.split(","))):
        name, _, count = item.partition(":")
        if name not in RECIPES:
            unknown.append(name)
        else:
            plan[name] = _seeds_of(item, count, seeds, first_seed)
    if not plan or unknown:
        given = ", ".join(unknown) or "(none given)"
        raise DfstError(f"unknown task(s) {given} (known: {', '.join(RECIPES)}; dfst reproduce takes the "
                        "built-in tasks, not those of a --tasks-file: train yours with dfst train)")
    check_work("cells", sum(map(len, plan.values())), f"--tasks {tasks} with --seeds {seeds:,}")
    return {task: list(seeds) for task, seeds in plan.items()}  # built once counted


def _seeds_of(item: str, count: str, seeds: int, first_seed: int) -> range:
    """The seeds of one --tasks item: TASK (--seeds from --first-seed), TASK:N or TASK:A-B."""
    low, dash, high = count.partition("-")
    if dash and low.isdigit() and high.isdigit() and int(low) <= int(high):
        return range(int(low), int(high) + 1)
    if count and (dash or not count.isdigit() or int(count) < 1):
        raise DfstError(f"bad seeds in --tasks {item!r}: want TASK:N with N >= 1, or TASK:A-B with A <= B")
    return range(first_seed, first_seed + (int(count) if count else seeds))


def check_overrides(iters: int | None, restarts: int | None, time_budget: float) -> dict:
    """The recipe overrides given, checked before any work: counts >= 1, a finite positive budget."""
    for option, value in (("--iters", iters), ("--restarts", restarts)):
        if value is not None and value < 1:
            raise DfstError(f"{option} must be >= 1, got {value}")
    if not (math.isfinite(time_budget) and time_budget > 0):
        raise DfstError(f"--time-budget must be a positive number of seconds, got {time_budget}")
    return {k: v for k, v in (("iters", iters), ("restarts", restarts)) if v is not None}


def seed_line(task: str, seed: int, results: list[Result]) -> str:
    """What `dfst reproduce` prints after each seed."""
    return (f"{task} seed {seed}: " + ", ".join(f"{r.system} robust to {r.robust_lg:,}{_verdict(r)}"
                                                for r in results) + f" ({results[0].train_seconds} CPU s)")


def _verdict(result: Result) -> str:
    cert = result.details.get("certified")
    if cert is None:
        return ""
    bound = "" if cert["max_digits"] is None or cert["verdict"] != "CERTIFIED" else \
        f" to {cert['max_digits']:,} digits"
    return f" ({cert['verdict']}{bound})"


def display(row: dict) -> dict:
    """A summary row for people (COLUMNS)."""
    failing = row["first_failing_min"]
    return {"task": row["task"], "system": row["system"], "seeds": row["seeds"], "samples": row["samples"],
            "max train digits": row["max_train_digits"], "d": _d_text(row), "params": f"{row['params']:,}",
            "robust at target": f"{row['successes']}/{row['seeds']} at {row['target_digits']:,}",
            "robust LG (median, min)": f"{row['robust_lg_median']:,.0f}, {row['robust_lg_min']:,}",
            "probabilistic LG (median)": f"{row['probabilistic_lg_median']:,.0f}",
            "first failing length": "none" if failing is None else f"{failing:,}",
            "certified (all lengths / bounded / none)": certified_text(row["certified"]),
            "CPU s/seed (median, max)": f"{row['cpu_seconds_median']}, {row['cpu_seconds_max']}"}


def _d_text(row: dict) -> str:
    """`19`, or `19 (grown to 20-22)` where fine-tuning added dimensions on some seeds."""
    grown = row.get("d_grown")
    if not grown:
        return str(row["d"])
    return f"{row['d']} (grown to {grown[0] if grown[0] == grown[1] else f'{grown[0]}-{grown[1]}'})"


def markdown(rows: list[dict]) -> str:
    """The summary rows as the Markdown table of README's reproduce block."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(str(display(r)[c]) for c in COLUMNS) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def write_readme(path: Path, rows: list[dict]) -> None:
    """Rewrite the reproduce block of the README at `path` with the summary rows."""
    rewrite_between(path, MARK_START, MARK_END, markdown(rows))
