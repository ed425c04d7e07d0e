"""The result type: one scored system (a trained DFST, an extracted automaton, a baseline) on one task
and seed, and its JSON form (docs/results.md).

A result file is a JSON object `{"format": "dfst-result", "version": 1, <the fields of Result>}`.
Files written before the marker (today's results/dfst/*.json and results/baselines/*.json) have no
`format` and no `version`; they are read as version 0 and give the same Result. `from_dict` checks
every field and names the file and the field in a one-line DfstError; nothing here imports torch.

A Result built from a checkpoint's eval.json or a run's summary.json holds null where its source
records nothing (a compiled expert has no seed, an unevaluated run no LG); a stored result that a
table reads has every figure (`dfst.results.store.load_results` checks it).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace

from dfst.errors import DfstError
from dfst.io import records

FORMAT = "dfst-result"
VERSION = 1  # bump on any change to the fields (docs/results.md, "Versions")

_INT = (int, type(None))
_NUMBER = (int, float, type(None))
_STR = (str, type(None))
# The fields every result file has, and their JSON types (null: the source does not record it).
REQUIRED: dict[str, type | tuple[type, ...]] = {
    "system": str, "task": str, "seed": _INT, "samples": _INT, "params": _INT, "max_train_digits": _INT,
    "robust_lg": _INT, "probabilistic_lg": _INT, "train_seconds": _NUMBER, "hardware": _STR}
# Fields a file may leave out (files from before them); their defaults are Result's.
OPTIONAL: dict[str, type | tuple[type, ...]] = {
    "levels": list, "config": dict, "notes": str, "details": dict, "key": (dict, type(None)),
    "dfst_version": _STR}
# The figures a comparison table aggregates: never null in a stored result.
FIGURES = ("seed", "samples", "params", "max_train_digits", "robust_lg", "probabilistic_lg", "train_seconds",
           "hardware")


@dataclass
class Result:
    """One scored system on one task and seed; `dfst table`, `report`, `report-runs` and `reproduce`
    read it. Construct it with keywords; `to_dict` / `from_dict` are its JSON form."""

    system: str                     # "DFST", "DFST (extracted)", "RPNI", "neural-gpu", "compile", ...
    task: str
    seed: int | None
    samples: int | None             # training examples (PTOs, I/O pairs, scratchpads) the system saw
    params: int | None              # trainable parameters (0 for an automaton learner: see details)
    max_train_digits: int | None
    robust_lg: int | None           # largest N with every tested length <= N robust (0 if none)
    probabilistic_lg: int | None    # the same for the random pairs alone
    train_seconds: float | None     # CPU seconds of training
    hardware: str | None
    levels: list[dict] = field(default_factory=list)  # one per tested length (protocol.evaluate's levels)
    config: dict = field(default_factory=dict)          # the system's configuration, as it ran
    notes: str = ""
    details: dict = field(default_factory=dict)         # system-specific figures (states, loss, a search...)
    key: dict | None = None         # what determined a reproduced result (dfst.studies.seeds.result_key)
    dfst_version: str | None = None  # the dfst that wrote the file

    def to_dict(self) -> dict:
        """The JSON form: the format marker and version first, then every field."""
        return {"format": FORMAT, "version": VERSION, **asdict(self)}

    @classmethod
    def from_dict(cls, data: object, where: str) -> Result:
        """The Result of a result file's JSON (any version up to VERSION), every field checked;
        otherwise a one-line DfstError naming `where` (the file) and the field."""
        if not isinstance(data, dict):
            raise DfstError(f"{where} does not hold a JSON object")
        version = result_version(data, where)
        known = {f.name for f in fields(cls)}
        if version > 0:
            unknown = sorted(set(data) - known - {"format", "version"})
            if unknown:
                raise DfstError(f"{where}: unknown field {unknown[0]!r} in a version {version} result")
        found = {k: v for k, v in data.items() if k in known}  # legacy files: anything else is dropped
        records.require(found, REQUIRED, where)
        records.require(found, {k: v for k, v in OPTIONAL.items() if k in found}, where)
        records.require_list(found.get("levels", []), records.LEVEL, f"{where} levels")
        return cls(**found)

    def checked(self, where: str) -> Result:
        """This result if its JSON form is valid (as `from_dict` checks it), else a DfstError."""
        return Result.from_dict(self.to_dict(), where)

    def missing_figures(self) -> list[str]:
        """The FIGURES this result holds as null (a table needs none; samples may be null where a
        search for the fewest samples never reached a robust model: `sample_search`)."""
        searched = self.sample_search()[1] is not None
        return [name for name in FIGURES
                if getattr(self, name) is None and not (name == "samples" and searched)]

    def sample_search(self) -> tuple[int | None, int | None]:
        """(samples, None) for a result that needed `samples`; (None, cap) where a search for the
        fewest samples (RPNI's ladder) tried up to `cap` and never reached a robust model. Files from
        before `samples_cap` recorded the cap as samples, with samples_needed null."""
        cap = self.details.get("samples_cap")
        if self.samples is None and isinstance(cap, int) and not isinstance(cap, bool):
            return None, cap
        old_cap = "samples_needed" in self.details and self.details["samples_needed"] is None
        if old_cap and self.details.get("search"):
            return None, self.samples
        return self.samples, None

    @classmethod
    def from_eval_report(cls, report: dict, checkpoint_config: dict, *, name: str) -> Result:
        """A checkpoint's result: `dfst eval`'s report (eval.json, checked with `records.eval_report`)
        and the checkpoint's config.json. The system is the checkpoint's provenance (compile, train,
        ...); a trained checkpoint's provenance gives its seed, samples and training length. `name`
        says which checkpoint it is (details["checkpoint"])."""
        provenance = _object(checkpoint_config.get("provenance"))
        trained = _object(provenance.get("train_config"))
        return cls(
            system=str(provenance.get("source", "?")), task=report["task"], seed=trained.get("seed"),
            samples=trained.get("samples"), params=checkpoint_config.get("params"),
            max_train_digits=trained.get("max_digits"), robust_lg=report["robust_max_digits"],
            probabilistic_lg=report["probabilistic_max_digits"], train_seconds=None, hardware=None,
            levels=report["levels"], config=checkpoint_config,
            details={"checkpoint": name, "mode": report["mode"], "eval_seconds": report.get("seconds")})

    @classmethod
    def from_run_summary(cls, summary: dict, *, name: str) -> Result:
        """A training run's result: its summary.json (checked with `records.summary`); the LG of the
        run's model (RUN/model: the fine-tuned weights' evaluation with plain h where the run was
        fine-tuned, else its last evaluation), null if it never evaluated; a fine-tuned run keeps the
        trained weights' LG (before fine-tuning) as details["trained_robust_lg"] (and its levels).
        details["model"] says which weights RUN/model holds, details["tested_by"] who measured the LG
        (`with_model_eval` puts `dfst eval RUN`'s measure in its place). `name` says which run it is."""
        trained = summary["eval"] or {}
        tuned = _object(summary.get("finetune"))
        tuned_eval = _object(tuned.get("eval_plain")) if "error" not in tuned else {}
        evaluation = tuned_eval or trained
        model = "fine-tuned" if tuned_eval else "trained (fine-tuning failed)" if tuned else "trained"
        return cls(
            system="DFST", task=summary["task"], seed=None, samples=summary["samples"],
            params=summary.get("params"), max_train_digits=None,
            robust_lg=evaluation.get("robust_max_digits"),
            probabilistic_lg=evaluation.get("probabilistic_max_digits"),
            train_seconds=summary.get("cpu_seconds"), hardware=None, levels=evaluation.get("levels", []),
            details={"run": name, "d": _model_d(summary["d"], tuned if tuned_eval else {}),
                     "iterations": summary["iterations"],
                     "final_loss": summary["final_loss"], "wall_seconds": summary["seconds"],
                     "fine_tuned": bool(tuned_eval), "model": model,
                     "tested_by": "the run's own check" if evaluation else None,
                     "trained_robust_lg": trained.get("robust_max_digits") if tuned_eval else None,
                     "trained_levels": trained.get("levels", []) if tuned_eval else [],
                     "traces_read": _object(summary.get("traces")).get("total", "-"),
                     "check": held_out_check(_object(summary.get("agreement")))})

    def with_model_eval(self, report: dict) -> Result:
        """This run's result with its model's LG as `dfst eval RUN` measured it (RUN/model/eval.json,
        checked with `records.eval_report`): the measure a user asked for, usually to longer lengths
        than the run's own check."""
        details = self.details | {"tested_by": f"dfst eval ({report['mode']} h)"}
        return replace(self, robust_lg=report["robust_max_digits"], levels=report["levels"],
                       probabilistic_lg=report["probabilistic_max_digits"], details=details)


def held_out_check(found: dict) -> str:
    """A run's own check on held-out PTOs in a word: 'agreed (4-6 digits)', 'NOT ENOUGH DATA', '-'."""
    if not found:
        return "-"
    low, high = _object(found.get("checked")).get("digits", ["?", "?"])
    grew = _object(found.get("data")).get("rounds")
    rounds = f", data grown {grew} round{'s' if grew != 1 else ''}" if grew else ""
    return f"agreed ({low}-{high} digits{rounds})" if found.get("agreed") else f"NOT ENOUGH DATA{rounds}"


def is_result(data: object) -> bool:
    """Is this JSON a result: marked as one, or an unmarked object with a "system" (files from before
    the marker)? Other JSON (a baseline's side-task record, a checkpoint's config) is not."""
    if not isinstance(data, dict):
        return False
    return data.get("format") == FORMAT if "format" in data else "system" in data


def result_version(data: dict, where: str) -> int:
    """The version of a result file's JSON: 0 for a file from before the marker."""
    if "format" not in data and "version" not in data:
        return 0
    if data.get("format") != FORMAT:
        raise DfstError(f"{where}: field 'format' is {data.get('format')!r}, not {FORMAT!r}")
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise DfstError(f"{where}: field 'version' is {version!r}, not a version number")
    if version > VERSION:
        raise DfstError(f"{where} is a version {version} result; this dfst reads versions up to {VERSION} "
                        "(a newer dfst wrote it)")
    return version


def _model_d(trained_d: int, tuned: dict) -> int:
    """RUN/model's hidden size: fine-tuning may grow d (one dimension per block; its "d" is [before,
    after])."""
    sizes = tuned.get("d")
    grown = sizes[-1] if isinstance(sizes, list) and sizes else None
    return grown if isinstance(grown, int) and not isinstance(grown, bool) else trained_d


def _object(value: object) -> dict:
    return value if isinstance(value, dict) else {}
