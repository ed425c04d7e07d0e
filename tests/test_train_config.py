"""TrainConfig: one grouped schema; its flat dictionary never changes (stored results, reproduce's keys
and run directories hold it); `dfst train`'s options and reproducing command come from it; --published
and --data never silently override a flag the user gave."""

from __future__ import annotations

import json
import shlex
from dataclasses import replace
from pathlib import Path

import pytest

from cli_helpers import TRAIN_ADD2, assert_one_line_error, run, run_json
from dfst.errors import DfstError
from dfst.train import OptimConfig, TrainConfig, recipes
from dfst.train.config import CHOICES, FLAT_ORDER, GROUP_OF, command_line
from dfst.train.recipes import DEFAULT, MULT, PUBLISHED, RECIPES, configure, recipe, recipe_fields

# Written by the code before TrainConfig was grouped (issue 15), never regenerated.
PINNED = json.loads((Path(__file__).parent / "data" / "train_config_dicts.json").read_text())


def pinned_configs() -> dict[str, TrainConfig]:
    """The configs whose flat dicts are pinned, each taken as it was at the pin: autograd's engine, the
    expert's d and the state-reading samplers (the defaults then), without the fine-tuning phase
    (fields added after the pin), and mult2 and mult10 with MULT's 8,000 iterations."""
    cases = {"TrainConfig()": TrainConfig(), "recipes.DEFAULT": DEFAULT, "recipes.MULT": MULT}
    cases = {name: replace(cfg, engine="autograd", d_rule="expert", sampler="pairs" if name == "recipes.MULT"
                           else "cover") for name, cfg in cases.items()}
    for name, cfg in RECIPES.items():
        if name not in ("add2", "add10", "mult2", "mult10"):  # recipes added after the pin
            continue
        cfg = replace(cfg, finetune=False, finetune_frozen=0, engine="autograd", d_rule="expert",
                      sampler="pairs" if name in ("mult2", "mult10") else "cover",
                      iters=MULT.iters if name in ("mult2", "mult10") else cfg.iters)
        cases[f"RECIPES[{name!r}]"] = cfg
        cases[f"replace(RECIPES[{name!r}], **PUBLISHED)"] = replace(cfg, **PUBLISHED)
    cases["recipe('mult2', 3, noise_final=0.0, d=25, eval_digits=(10, 1000), target_digits=1000)"] = replace(
        recipe("mult2", 3, noise_final=0.0, d=25, eval_digits=(10, 1000), target_digits=1000), finetune=False,
        iters=MULT.iters, engine="autograd", d_rule="expert", sampler="pairs")
    return cases


def test_to_dict_is_todays_flat_dict_for_the_default_and_every_recipe():
    cases = pinned_configs()
    assert set(cases) == set(PINNED["cases"])
    for name, cfg in cases.items():
        assert cfg.to_dict() == PINNED["cases"][name], name
        assert json.dumps(cfg.to_dict()) == PINNED["json"][name], name  # same keys, same order
        assert TrainConfig.from_dict(cfg.to_dict()) == cfg


def test_flat_and_grouped_construction_agree():
    flat = TrainConfig(task="add10", iters=100, noise=0.0, restarts=2)
    grouped = TrainConfig(optim=OptimConfig(iters=100), task="add10", noise=0.0, restarts=2)
    assert flat == grouped and flat.iters == flat.optim.iters == 100 and flat.population.restarts == 2
    assert replace(flat, lr=0.5).lr == 0.5 and replace(flat, lr=0.5).iters == 100
    assert set(GROUP_OF) == set(FLAT_ORDER) and len(FLAT_ORDER) == len(set(FLAT_ORDER))
    with pytest.raises(TypeError, match="no field 'iterations'"):
        TrainConfig(iterations=3)
    with pytest.raises(DfstError, match="unknown training config field 'iterations'"):
        TrainConfig.from_dict({"iterations": 3})
    # a field missing from a flat dict takes its default, but one added since version 1 the value it had
    # before it existed: the engine was autograd's, d the expert's state count
    assert TrainConfig.from_dict({"iters": 7}) == TrainConfig(iters=7, engine="autograd", d_rule="expert")


def test_fields_added_later_appear_only_when_set():
    """config.json of a run without fine-tuning is what it was; with it, the fields are recorded."""
    assert "finetune" not in TrainConfig().to_dict()
    tuned = TrainConfig(finetune=True, finetune_lbfgs=10)
    flat = tuned.to_dict()
    assert flat["finetune"] is True and flat["finetune_lbfgs"] == 10 and "finetune_adam" not in flat
    assert TrainConfig.from_dict(flat) == tuned
    assert RECIPES["add2"].finetune and recipe("add2", 0).finetune


def test_the_schemas_choices_are_the_registries():
    from dfst.data import SAMPLERS
    from dfst.model import FORWARDS, INITS
    from dfst.train.dsize import D_RULES
    from dfst.train.loop import ENGINES, SCHEDULES
    from dfst.train.objectives import LOSSES

    registries = {"sampler": SAMPLERS, "schedule": SCHEDULES, "init": INITS, "loss": LOSSES,
                  "forward": FORWARDS, "engine": ENGINES, "d_rule": D_RULES}
    assert {name: tuple(r) for name, r in registries.items()} == CHOICES


def test_the_reproducing_command_names_every_field_as_before():
    """Same options and values as the hand-written command line before the schema (now in schema order,
    --no-bucket spelled out, --forward left out while h is normalised); with --data, the file decides
    samples, max digits and sampler."""
    def options(command: str) -> dict:
        words, found = shlex.split(command), {}
        for i, word in enumerate(words):
            if word.startswith("--"):
                takes_value = i + 1 < len(words) and not words[i + 1].startswith("--")
                found[word] = words[i + 1] if takes_value else True
        return found

    for name, commands in PINNED["commands"].items():
        cfg = eval(name, {"TrainConfig": TrainConfig, "RECIPES": RECIPES, "PUBLISHED": PUBLISHED,
                          "replace": replace})
        # --forward only where it has an effect (h not normalised): dfst train refuses it otherwise
        ignored = {"--forward"} if cfg.normalize_h else set()
        bucket = {} if cfg.bucket else {"--no-bucket": True}
        # fields added since (fine-tuning) are named too, so the command never falls back on a recipe
        recipe = not name.startswith("replace")
        later = {"--finetune" if cfg.finetune else "--no-finetune": True, "--finetune-adam": "0",
                 "--finetune-plain": "0", "--finetune-lbfgs": "0", "--finetune-damping": "1.0",
                 "--finetune-centres": "3000", "--finetune-margin": "0.5",
                 # mult10's frozen phase, and add10's since d comes from the PTOs
                 "--finetune-frozen": "1000" if recipe and ("'mult10'" in name or "'add10'" in name)
                 else "0",
                 "--engine": "fused",  # the default engine since it replaced autograd's
                 "--d-rule": cfg.d_rule,  # d from the PTOs since, the expert's count in the published recipe
                 "--grow-rounds": "0"}  # data growth since, off in every recipe
        # the recipe values changed since: the iterations of mult2 and mult10 (8,000 -> 4,000 with
        # fine-tuning)
        mults = ("'mult2'" in name or "'mult10'" in name) and recipe
        later |= {"--iters": "4000"} if mults else {}
        old, new = options(commands["out"]), options(command_line(cfg, "runs/x"))
        sampled = {"--sampler": "contexts"}  # the trace-only sampler, the default since
        assert new == {k: v for k, v in old.items() if k not in ignored} | bucket | later | sampled, name
        old, new = options(commands["data"]), options(command_line(cfg, "runs/x", "d.pto.zip"))
        kept = {k: v for k, v in old.items() if k not in ignored | {"--sampler"}}
        assert new == kept | bucket | later, name


def test_published_and_data_never_override_a_given_flag():
    cfg, set_by = configure("add2", {}, set(), published=True)
    assert set_by == {"recipe": {"add2": {"finetune": True}}, "--published": PUBLISHED}
    assert cfg == replace(TrainConfig(), **PUBLISHED)
    same, _ = configure("add2", {"init": "identity"}, {"init"}, published=True)  # agrees: fine
    assert same == cfg
    with pytest.raises(DfstError, match="--init conflicts with --published, which sets init=identity"):
        configure("add2", {"init": "jitter"}, {"init"}, published=True)
    with pytest.raises(DfstError, match="--restarts conflicts with --published"):
        configure("add2", {"restarts": 4}, {"restarts"}, published=True)
    operands = [("1", "10"), ("111", "1")]
    cfg, set_by = configure("add2", {}, set(), operands=operands, sampling_rule="uniform-lengths")
    assert (cfg.samples, cfg.max_digits, cfg.sampler) == (2, 3, "uniform")
    assert set_by == {"recipe": {"add2": {"finetune": True}},
                      "--data": {"samples": 2, "max_digits": 3, "sampler": "uniform"}}
    with pytest.raises(DfstError, match="--samples conflicts with --data"):
        configure("add2", {"samples": 5}, {"samples"}, operands=operands)
    with pytest.raises(DfstError, match="--sampler conflicts with --data"):
        configure("add2", {"sampler": "cover"}, {"sampler"}, operands=operands)
    with pytest.raises(DfstError, match="--forward hillis has no effect while h is normalised"):
        configure("add2", {"forward": "hillis"}, {"forward"})
    assert configure("add2", {"forward": "hillis", "normalize_h": False}, {"forward", "normalize_h"})[0]


def test_configure_starts_from_the_tasks_recipe(monkeypatch):
    # iters: 4,000, TrainConfig's default
    mult2 = {"samples": 750, "max_digits": 5, "batch": 64, "bucket": True, "noise": 0.01, "restarts": 4,
             "finetune": True}
    assert recipe_fields("mult2") == mult2 and recipe_fields("add2") == {"finetune": True}
    assert recipe_fields("add10") == {"samples": 225, "restarts": 8, "finetune": True,
                                      "finetune_frozen": 1000}
    assert recipe_fields("mult10") == {k: v for k, v in mult2.items() if k != "max_digits"} | {
        "samples": 400, "finetune_frozen": 1000}
    cfg, set_by = configure("mult2", {"samples": 10, "iters": 3, "noise": 0.5}, {"samples"})
    assert cfg == replace(RECIPES["mult2"], samples=10, eval_every=1000)  # the options not given are ignored
    assert set_by == {"recipe": {"mult2": mult2}, "flags": {"samples": 10}}
    assert configure("mult2", {"samples": 10})[0].samples == 10  # given=None: every value is given
    # --published overrides the recipe (restarts 4 -> 1, noise 0.01 -> 0) but never a given flag
    cfg, set_by = configure("mult2", {"iters": 5}, {"iters"}, published=True)
    assert cfg == replace(RECIPES["mult2"], iters=5, eval_every=1000, **PUBLISHED)
    assert list(set_by) == ["recipe", "--published", "flags"] and set_by["--published"] == PUBLISHED
    with pytest.raises(DfstError, match="--restarts conflicts with --published"):
        configure("mult2", {"restarts": 4}, {"restarts"}, published=True)
    # --data decides samples and max_digits over the recipe
    cfg, set_by = configure("mult2", {}, set(), operands=[("12", "3")])
    assert (cfg.samples, cfg.max_digits, cfg.sampler) == (1, 2, "contexts") and "--data" in set_by
    # a task without a recipe: the general one, add2's with its data grown
    monkeypatch.delitem(recipes.RECIPES, "add10")
    general = {"finetune": True, "grow_rounds": recipes.GROW_ROUNDS, "finetune_frozen": recipes.FROZEN}
    assert configure("add10", {}, set()) == (TrainConfig(task="add10", **general),
                                             {"recipe": {"general recipe": general}})


def test_cli_conflicts_are_one_line_errors_and_settings_are_printed(capsys, tmp_path):
    for args, fragment in [(("--published", "--noise", "0.1"), "--noise conflicts with --published"),
                           (("--published", "--extract"), "--extract conflicts with --published"),
                           (("--forward", "scan"), "--forward scan has no effect")]:
        code, _, err = run(capsys, *TRAIN_ADD2, *args, "--out", tmp_path / "run")
        assert_one_line_error(code, err, fragment)
        assert not (tmp_path / "run").exists()
    code, _, err = run(capsys, *TRAIN_ADD2, "--published", "--iters", "1", "--eval-digits", "2",
                       "--eval-random", "0", "--samples", "2", "--max-digits", "1", "--out", tmp_path / "p")
    assert code == 0 and "--published sets init=identity, normalize_h=False" in err
    summary = run_json(capsys, *TRAIN_ADD2, "--published", "--iters", "1", "--eval-digits", "2",
                       "--eval-random", "0", "--samples", "2", "--max-digits", "1", "--out", tmp_path / "q")
    assert summary["set_by"] == {"recipe": {"add2": {"finetune": True}}, "--published": PUBLISHED,
                                 "flags": {"samples": 2, "max_digits": 1, "iters": 1, "eval_digits": [2],
                                           "eval_random": 0, "finetune": False}}


def test_a_config_without_an_engine_ran_autograd_and_is_never_taken_for_a_fused_one():
    """The fused engine is the default; a run or stored result from before it (its config lacks
    `engine`) ran autograd's pass, and resuming or reusing it under the other engine is refused."""
    from dfst.studies.seeds import eval_protocol, key_differences, result_key
    from dfst.train.rundir import run_differences

    fused, autograd = TrainConfig(), replace(TrainConfig(), engine="autograd")
    assert fused.engine == "fused" and fused.to_dict()["engine"] == "fused"
    assert "engine" not in autograd.to_dict()  # an autograd config.json is what it always was
    assert TrainConfig.from_dict(autograd.to_dict()) == autograd
    assert TrainConfig.from_dict(fused.to_dict()) == fused
    old_run, new_run = {"train": autograd.to_dict()}, {"train": fused.to_dict()}
    assert run_differences(old_run, fused.to_dict()) == ["engine='autograd', not 'fused'"]
    assert run_differences(new_run, autograd.to_dict()) == ["engine='fused', not 'autograd'"]
    assert run_differences(new_run, fused.to_dict()) == []
    protocol = eval_protocol("add2")
    old, new = result_key(autograd, protocol), result_key(fused, protocol)
    assert old["sha256"] != new["sha256"]
    assert key_differences(old, new) == ["train.engine='autograd', not 'fused'"]
    assert key_differences(new, old) == ["train.engine='fused', not 'autograd'"]
