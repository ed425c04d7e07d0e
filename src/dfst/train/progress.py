"""What a training run tells a person as it goes and when it ends: the words of each progress record
(the `dfst train` bar shows the same) and a plain verdict on the model the run wrote.

`train` logs both to the `dfst.train` logger at INFO, which is silent unless the caller turns logging
on (`logging.basicConfig(level=logging.INFO)`); its `progress` callback gets the records themselves.
"""

from __future__ import annotations

import logging

from dfst.results.wording import lg_words

LOGGER = logging.getLogger("dfst.train")
LOGGER.addHandler(logging.NullHandler())  # a library's logger: nothing shown unless the caller asks

FINETUNE_PHASES = {"adam": "fine-tuning (Adam)", "lbfgs": "fine-tuning (L-BFGS)",
                   "frozen": "fine-tuning (L-BFGS, centres frozen)",
                   "centres": "fine-tuning (L-BFGS at the centres)"}
FINETUNE_EVERY = 100  # a fine-tuning phase reports every iteration (Adam's); people see every 100th


def eval_text(report: dict | None) -> str:
    """A closed-loop evaluation in one phrase: 'eval 10:47/47 100:226/226'."""
    if not report:
        return ""
    return "eval " + " ".join(f"{lv['digits']}:{lv['exact']}/{lv['instances']}" for lv in report["levels"])


def stage_text(record: dict) -> str:
    """Where a run that grows d or its data stands, from a training record: 'd 12, 40 PTOs (data
    round 1 of 5)'; '' for a record that does not say (a fine-tuning phase's)."""
    if "d" not in record:
        return ""
    text = f"d {record['d']}, {record['samples']:,} PTOs"
    return text + (f" (data round {record['round']} of {record['rounds']})" if record.get("rounds") else "")


def measure_text(record: dict) -> str:
    """What the record's phase minimises, named: training's loss or a fine-tuning phase's objective
    (the teacher-forced loss is not what fine-tuning minimises)."""
    if "phase" not in record:
        return f"loss {record['loss']:.3g}"
    value = record.get("objective")
    return "fine-tuning objective " + ("…" if value is None else f"{value:.3g}")


def shown(record: dict, log_every: int) -> bool:
    """Is this record one a person sees: every `log_every`-th training iteration, every evaluation,
    every FINETUNE_EVERY-th fine-tuning iteration, and each phase's last?"""
    period = FINETUNE_EVERY if "phase" in record else max(log_every, 1)
    return record["iteration"] % period == 0 or record["iteration"] == record["iters"] or "eval" in record


def progress_line(record: dict) -> str:
    """One progress record as a line: 'iter 1,000/4,000 loss 0.0316  eval 10:30/47 100:2/226'."""
    where = FINETUNE_PHASES[record["phase"]] if "phase" in record else eval_text(record.get("eval"))
    return f"iter {record['iteration']:,}/{record['iters']:,} {measure_text(record)}  {where}".rstrip()


def log_progress(record: dict, log_every: int) -> None:
    """The record on the `dfst.train` logger, at INFO, when a person would see it."""
    if LOGGER.isEnabledFor(logging.INFO) and shown(record, log_every):
        LOGGER.info(progress_line(record))


# ----------------------------------------------------------------------------- the verdict


def model_check(summary: dict) -> tuple[dict | None, str]:
    """The closed-loop check the run made of the model it wrote (RUN/model), and in which h mode:
    the fine-tuned weights' (plain h) where fine-tuning succeeded, else training's last (rescaled)."""
    tuned = summary.get("finetune") or {}
    if tuned and "error" not in tuned:
        return tuned.get("eval_plain"), "plain h"
    return summary.get("eval"), "h rescaled"


def model_verdict(summary: dict, cfg: dict) -> tuple[bool | None, str]:
    """Whether the model the run wrote is exact on the run's own held-out check (None: not checked),
    and a plain verdict saying so and what to try next. `cfg`: the run's TrainConfig as a dict."""
    run, check = summary["out"], model_check(summary)
    report, mode = check
    if summary.get("stopped_by") == "diverged":
        return False, (f"{run}/model holds the last finite weights of a run that diverged; lower --lr "
                       f"(now {cfg['lr']:g}) and train again")
    if not report or not report.get("levels"):
        return None, (f"{run}/model was not checked closed loop (no --eval-digits); measure it with: "
                      f"dfst eval {run} --until-fail")
    levels = report["levels"]
    lengths = " and ".join(f"{lv['digits']:,}" for lv in levels)
    if all(lv["robust"] for lv in levels):
        return True, (f"{run}/model is exact on the run's own held-out check ({mode}, every instance at "
                      f"{lengths} digits, none a training pair). Next: dfst eval {run} --until-fail "
                      f"measures longer lengths; dfst certify {run} tries to prove it for every length")
    failing = next(lv for lv in levels if not lv["robust"])
    where = lg_words(report["robust_max_digits"], levels)
    return False, (f"{run}/model is NOT exact on the run's own held-out check ({mode}): {where}, "
                   f"{failing['exact']}/{failing['instances']} exact at {failing['digits']:,} digits. "
                   f"Try: {'; '.join(advice(summary, cfg))}")


def advice(summary: dict, cfg: dict) -> list[str]:
    """What to change for a run whose model is not exact, most likely first."""
    tuned = summary.get("finetune") or {}
    asked = cfg.get("samples", summary["samples"])  # (a config of a run whose data grew asked for fewer)
    grown = "" if summary["samples"] == asked else f", grown to {summary['samples']}"
    tips = [f"more samples (--samples {2 * summary['samples']}, now {asked}{grown})",
            f"longer PTOs (--max-digits {cfg['max_digits'] + 2}, now {cfg['max_digits']})"]
    if not cfg.get("finetune"):
        tips.append("--finetune (fits the weights to the automaton read off, exact far past the training "
                    "length)")
    elif "error" in tuned:
        tips.append(f"fine-tuning failed ({tuned['error']}): more samples or iterations first")
    if summary.get("stopped_by") == "iters":
        tips.append(f"more iterations (--iters {2 * cfg['iters']}, now {cfg['iters']})")
    tips.append("--until-certified (adds each counterexample's instance to the data and trains again)")
    return tips
