"""One seed of `dfst reproduce`: a task's recipe trained (or its stored run reused), each model of
the run scored under the protocol and certified, the results stored under their key.

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
key is never reused silently: a seed refuses, naming the fields that differ, unless told to
train and evaluate again (`rerun`, replacing dfst's own stale result and run) or to use the stored
results as they are (`accept_stored`, said on stderr). Results from before keys hold their
TrainConfig as "config" and were evaluated with the default protocol; they are matched on those.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from dfst.baselines.common import hardware
from dfst.certify.saved import certify_checkpoint
from dfst.errors import DfstError
from dfst.grid.rollout import DfstWeights
from dfst.io.inputs import read_json_file
from dfst.io.outputs import file_kind, remove_stale_temporaries, write_atomic
from dfst.io.run_guard import FORCE_HINT
from dfst.io.targets import SUMMARY_FILE
from dfst.model.checkpoint import load_checkpoint
from dfst.protocol.config import EvalConfig
from dfst.protocol.eval_files import held_out_of
from dfst.protocol.evaluate import run_protocol
from dfst.protocol.instances import HeldOut
from dfst.results import Result, result_bytes
from dfst.tasks.hard import hard_set_version
from dfst.train import TrainConfig, train
from dfst.train.batches import dataset_sha256
from dfst.train.config import EvaluationConfig, LoggingConfig, before_they_existed
from dfst.train.loop import training_data
from dfst.train.recipes import TARGET_DIGITS, training_recipe
from dfst.train.rundir import check_run_dir, check_run_files, read_json, run_differences

SYSTEMS = {"DFST": "model", "DFST (before fine-tuning)": "trained", "DFST (extracted)": "extracted"}
RESULT_SCHEMA = 1  # bump when what a stored result holds, or how it is computed, changes
# The evaluation settings a stored key may lack (added since): what they were before they existed.
EVAL_BEFORE = {"certify": False, "hard_set": 1, "held_out": False}
DEFAULT_TIME_BUDGET = 300.0


def eval_protocol(task: str, time_budget: float = DEFAULT_TIME_BUDGET, *, certify: bool = True,
                  rescale: bool = False) -> dict:
    """The length-generalisation protocol a result is evaluated with (plain JSON): h plain (or
    rescaled); `certify`: each model is also given to `dfst certify` in the same mode; `held_out`:
    no instance the run was trained on is tested."""
    return {"digits": [10, 100, 1000], "random": 10, "rescale": rescale, "until_fail": True,
            "ladder_factor": 10.0, "target_digits": TARGET_DIGITS[task], "time_budget": time_budget,
            "certify": certify, "hard_set": hard_set_version(task), "held_out": True}


def run_config(task: str, seed: int, overrides: dict | None = None) -> TrainConfig:
    """What `dfst train TASK --seed SEED` trains, with `overrides`: the recipe, watched as dfst train
    watches a run (the evaluation and logging groups' defaults), so that reproduce and dfst train
    make the same run directory and either can finish the other's."""
    watched = replace(training_recipe(task, seed), evaluation=EvaluationConfig(), logging=LoggingConfig())
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
    TrainConfig field the stored config lacks (added since) counts as what it was before it existed
    (`before_they_existed`: autograd for the engine), an evaluation setting as `EVAL_BEFORE` says."""
    defaults = TrainConfig().to_dict() | before_they_existed()
    differences = [] if old.get("schema") == new["schema"] else [f"schema={old.get('schema')!r}, not "
                                                                 f"{new['schema']!r}"]
    for part, base in (("train", defaults), ("eval", EVAL_BEFORE)):
        stored = old.get(part) if isinstance(old.get(part), dict) else {}
        stored, wanted = base | stored, base | new[part]
        differences += [f"{part}.{name}={stored.get(name)!r}, not {value!r}"
                        for name, value in wanted.items() if stored.get(name) != value]
    return differences


def result_path(results: Path, name: str, seed: int, sub: str) -> Path:
    """The result of the checkpoint `sub` of run `name` (`run_name`) and seed."""
    suffix = "" if sub == "model" else f"-{sub}"
    return results / f"{name}{suffix}-s{seed}.json"


def evaluate_checkpoint(directory: Path, task: str, protocol: dict) -> tuple[dict, int]:
    """The protocol up to the task's target, against the answers of the agent the checkpoint imitates
    (the task's own, for the expert), never on the run's training pairs (with the protocol's
    `held_out`); returns the report and the first failing length (0: none)."""
    from dfst.tasks.own_agent import checkpoint_task

    model, config = load_checkpoint(directory, expect_task=task)
    cfg = EvalConfig(digits=tuple(protocol["digits"]), random=protocol["random"], rescale=protocol["rescale"],
                     until_fail=protocol["until_fail"], ladder_factor=protocol["ladder_factor"],
                     max_digits=protocol["target_digits"], time_budget=protocol["time_budget"])
    held_out = held_out_of(directory)[0] if protocol.get("held_out") else HeldOut()
    report, _ = run_protocol(checkpoint_task(config), DfstWeights.of(*model.numpy_weights()), cfg,
                             held_out=held_out)
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
    finished = read_json(run / SUMMARY_FILE) if resume else None  # a finished run kept as it is
    summary = train(cfg, run, data=data, resume=resume, command=f"dfst reproduce --tasks {task}",
                    progress=progress)
    # the run's own count covers its resumed segments too; a run from before it existed: measure here
    cpu = summary.get("cpu_seconds", time.process_time() - start)
    untouched = finished is not None and read_json(run / SUMMARY_FILE) == finished
    carried = carried_certifications(task, seed, key, paths, summary, cpu) if untouched else {}
    results = []
    for system, sub in systems_of(cfg).items():
        if progress is not None:
            progress({"stage": f"evaluating{' and certifying' if certify else ''} {system}"})
        results.append(_result(system, sub, run, cfg, key, summary, cpu, carried.get(system)))
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


def carried_certifications(task: str, seed: int, key: dict, paths: dict[str, Path], summary: dict,
                           cpu: float) -> dict[str, dict]:
    """{system: certification} of the stored results a rerun may keep, of a run it did not train
    again: those made from this very run (this config and the training figures of `summary`) and
    certified in this h mode. Certification reads no protocol instance (a proof covers every
    length), so a result evaluated again under another version of the protocol's instances keeps
    its verdict, marked with the version it was stored under."""
    stored, _ = _stored(task, seed, key, paths)
    carried = {}
    for system, result in stored.items():
        old, details = stored_key(result, task), result.details or {}
        trained = (details.get("train_cpu_seconds"), details.get("iterations"), details.get("d"))
        same_run = old.get("train") == key["train"] and trained == (round(cpu, 1), summary["iterations"],
                                                                   summary["d"])
        if details.get("certified") and same_run and old["eval"].get("certify") \
                and old["eval"].get("rescale") == key["eval"]["rescale"]:
            hard_set = old["eval"].get("hard_set", EVAL_BEFORE["hard_set"])
            carried[system] = {**details["certified"], "hard_set": hard_set}
    return carried


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
            cpu: float, carried: dict | None = None) -> Result:
    """The stored result of one system of a trained seed: evaluated with `key`'s protocol, certified
    (or its `carried` certification kept: `carried_certifications`)."""
    protocol = key["eval"]
    directory = run / sub
    report, failing = evaluate_checkpoint(directory, cfg.task, protocol) if directory.exists() else ({}, 0)
    details = {"first_failing_digits": failing, "stopped_by": report.get("stopped_by", "no_model"),
               "target_digits": protocol["target_digits"], "train_cpu_seconds": round(cpu, 1),
               "iterations": summary["iterations"], "restart": summary["restarts"]["chosen"],
               "d": summary["d"], "d_tried": [t["d"] for t in summary.get("tried", [])],
               "queries": summary.get("queries"), "traces": summary.get("traces"),
               "extracted": summary.get("extracted")}
    if protocol.get("certify") and directory.exists():
        details["certified"] = carried or certification(directory, cfg.task, protocol["rescale"])
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
