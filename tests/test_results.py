"""dfst.results: the one result type, its JSON form and versions, files, and the rows built from it."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import pytest

from cli_helpers import run, run_json
from dfst.errors import DfstError
from dfst.results import (
    FORMAT,
    VERSION,
    Result,
    checkpoint_row,
    display_rows,
    is_result,
    load_result,
    load_results,
    markdown_table,
    run_row,
    save_result,
    table_rows,
)
from dfst.results.schema import OPTIONAL, REQUIRED
from dfst.results.tables import checkpoint_display_row, run_display_row

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "results.md"
LEGACY = {"system": "NTM", "task": "add2", "seed": 0, "samples": 10, "params": 100, "max_train_digits": 3,
          "robust_lg": 3, "probabilistic_lg": 4, "train_seconds": 1.5, "hardware": "cpu"}
LEVEL = {"digits": 3, "instances": 12, "exact": 12, "robust": True}


def result(**changes) -> Result:
    return Result(**(LEGACY | {"levels": [LEVEL]} | changes))


# ----------------------------------------------------------------------------- the documented schema


def _type_name(kind) -> str:
    names = {str: "string", int: "integer", float: "number", list: "array", dict: "object",
             type(None): "null"}
    kinds = kind if isinstance(kind, tuple) else (kind,)
    shown = [names[k] for k in kinds if not (k is int and float in kinds)]
    return " or ".join(shown)


def test_docs_list_every_field_with_its_type():
    text = DOC.read_text()
    table = text[text.index("<!-- fields:start -->"):text.index("<!-- fields:end -->")]
    rows = [line.split(" | ")[:2] for line in table.splitlines() if line.startswith("| `")]
    documented = [(name.strip("| `"), kind) for name, kind in rows]
    specs = REQUIRED | OPTIONAL
    expected = [("format", "string"), ("version", "integer")]
    expected += [(f.name, _type_name(specs[f.name])) for f in fields(Result)]
    assert documented == expected
    assert set(specs) == {f.name for f in fields(Result)}
    assert f'| `format` | string | always `"{FORMAT}"` |' in table
    assert f"| `version` | integer | the schema version, {VERSION} " in table


# ----------------------------------------------------------------------------- JSON form and versions


def test_to_dict_leads_with_the_marker_and_round_trips():
    r = result(key={"sha256": "x"}, details={"d": 9})
    data = r.to_dict()
    assert list(data)[:3] == ["format", "version", "system"]
    assert (data["format"], data["version"]) == (FORMAT, VERSION)
    assert Result.from_dict(json.loads(json.dumps(data)), "r.json") == r


def test_a_legacy_file_reads_as_the_same_result_and_drops_what_it_does_not_know():
    r = Result.from_dict(LEGACY | {"levels": [LEVEL], "extra": 1}, "old.json")
    assert r == result() and r.key is None and r.dfst_version is None


def test_every_committed_result_file_loads():
    paths = sorted((REPO / "results").rglob("*.json"))
    loaded = [Result.from_dict(json.loads(p.read_text()), str(p)) for p in paths
              if is_result(json.loads(p.read_text()))]
    assert len(loaded) >= 90 and {"DFST", "DFST (extracted)", "RPNI"} <= {r.system for r in loaded}
    assert all(not r.missing_figures() for r in loaded)
    assert all(Result.from_dict(r.to_dict(), "again") == r for r in loaded)


@pytest.mark.parametrize("data, fragment", [
    ([1], "does not hold a JSON object"),
    ({k: v for k, v in LEGACY.items() if k != "seed"}, "lacks the field 'seed'"),
    (LEGACY | {"seed": "0"}, "field 'seed' is '0'"),
    (LEGACY | {"robust_lg": True}, "field 'robust_lg' is True"),
    (LEGACY | {"train_seconds": "1"}, "field 'train_seconds'"),
    (LEGACY | {"levels": [{"digits": 3}]}, "levels[0] lacks the field 'instances'"),
    (LEGACY | {"levels": {}}, "field 'levels'"),
    (LEGACY | {"details": []}, "field 'details'"),
    (LEGACY | {"format": "dfst-checkpoint", "version": 1}, "field 'format'"),
    (LEGACY | {"format": FORMAT}, "field 'version' is None"),
    (LEGACY | {"format": FORMAT, "version": VERSION + 1}, f"version {VERSION + 1} result"),
    (LEGACY | {"format": FORMAT, "version": VERSION, "extra": 1}, "unknown field 'extra'"),
])
def test_from_dict_names_the_file_and_the_field(data, fragment):
    with pytest.raises(DfstError) as info:
        Result.from_dict(data, "here.json")
    message = str(info.value)
    assert "here.json" in message and fragment in message and "\n" not in message


# ----------------------------------------------------------------------------- files


def test_save_and_load_a_result(tmp_path):
    path = tmp_path / "r" / "x.json"
    save_result(result(), path)
    stored = json.loads(path.read_text())
    assert stored["format"] == FORMAT and stored["dfst_version"]
    assert load_result(path) == result(dfst_version=stored["dfst_version"])
    with pytest.raises(DfstError, match="already exists"):
        save_result(result(), path)
    save_result(result(seed=1), path, overwrite=True)
    assert load_result(path).seed == 1


def test_every_file_under_results_names_its_format_and_version():
    """A stored result, a study's report or a side task's record: each says what it is and which
    version of its fields it holds, so that a later dfst can read it or refuse it by name."""
    stored = sorted((Path(__file__).resolve().parents[1] / "results").rglob("*.json"))
    unmarked = [str(path) for path in stored if not _marked(json.loads(path.read_text()))]
    assert len(stored) > 100 and unmarked == []


def _marked(data: dict) -> bool:
    version = data.get("version")
    return str(data.get("format")).startswith("dfst-") and type(version) is int and version >= 1


def test_the_comparison_names_each_rows_pto_sampler():
    runs = [result(system="DFST", config={"sampler": "contexts"}), result(system="DFST", seed=1,
            config={"sampler": "contexts"}), result(system="RPNI", config={"sampler": "cover"}), result()]
    shown = {row["system"]: row["PTO sampler"] for row in display_rows(table_rows(runs))}
    assert shown == {"DFST": "PTO contexts", "RPNI": "rule cover (reads states)", "NTM": "-"}
    assert "| system | task | seeds | samples | PTO sampler |" in markdown_table(table_rows(runs))


def test_migrate_rewrites_the_unmarked_results_once_with_every_value_kept(capsys, tmp_path):
    legacy = LEGACY | {"levels": [LEVEL], "notes": "old", "details": {"x": 1}}
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "old.json").write_text(json.dumps(legacy))
    (tmp_path / "new.json").write_text(json.dumps(result(seed=1).to_dict()))
    (tmp_path / "copy.json").write_text(json.dumps({"model": "ntm", "task": "copy", "seed": 0}))
    untouched = {name: (tmp_path / name).read_bytes() for name in ("new.json", "copy.json")}
    old = tmp_path / "sub" / "old.json"
    assert run_json(capsys, "migrate", "--results", tmp_path) == {"migrated": [str(old)]}
    migrated = json.loads(old.read_text())
    assert list(migrated)[:2] == ["format", "version"]
    assert (migrated["format"], migrated["version"]) == (FORMAT, VERSION)
    assert {key: migrated[key] for key in legacy} == legacy
    assert all((tmp_path / name).read_bytes() == data for name, data in untouched.items())
    assert run_json(capsys, "migrate", "--results", tmp_path) == {"migrated": []}  # once


def test_migrate_refuses_a_field_it_would_drop_before_rewriting_anything(capsys, tmp_path):
    (tmp_path / "a.json").write_text(json.dumps(LEGACY))
    (tmp_path / "b.json").write_text(json.dumps(LEGACY | {"comment": "mine"}))
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    code, _, err = run(capsys, "migrate", "--results", tmp_path)
    assert code == 2 and "b.json: field 'comment' is no result field" in err and err.count("\n") == 1
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_load_results_skips_what_is_no_result_and_refuses_a_result_without_a_figure(tmp_path):
    (tmp_path / "legacy.json").write_text(json.dumps(LEGACY))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "new.json").write_text(json.dumps(result(seed=1).to_dict()))
    (tmp_path / "copy.json").write_text(json.dumps({"model": "ntm", "task": "copy", "seed": 0}))
    (tmp_path / "config.json").write_text(json.dumps({"format": "dfst-checkpoint", "system": "x"}))
    found = load_results(tmp_path)
    assert [(r.seed, r.system) for r in found] == [(0, "NTM"), (1, "NTM")]
    assert table_rows(found)[0]["seeds"] == 2
    (tmp_path / "null.json").write_text(json.dumps(result(seed=None).to_dict()))
    with pytest.raises(DfstError, match=r"null\.json: field 'seed' is null"):
        load_results(tmp_path)


# ----------------------------------------------------------------------------- checkpoints and runs


def test_a_checkpoint_result_and_its_report_row():
    report = {"task": "add2", "mode": "plain", "robust_max_digits": 100, "probabilistic_max_digits": 100,
              "levels": [LEVEL, LEVEL | {"digits": 100}], "seconds": 0.5}
    config = {"params": 468, "provenance": {"source": "train", "train_config": {"seed": 3, "samples": 20,
                                                                              "max_digits": 3}}}
    r = Result.from_eval_report(report, config, name="runs/add2").checked("config.json")
    assert (r.system, r.seed, r.samples, r.max_train_digits, r.train_seconds) == ("train", 3, 20, 3, None)
    assert checkpoint_row(r) == {"task": "add2", "model": "train (runs/add2)", "params": 468,
                                 "robust LG": 100, "probabilistic LG": 100, "largest N tested": 100,
                                 "h mode": "plain", "eval seconds": 0.5}
    with pytest.raises(DfstError, match="config.json: field 'params'"):
        Result.from_eval_report(report, config | {"params": "many"}, name="x").checked("config.json")
    failed = report | {"robust_max_digits": 0, "levels": [LEVEL | {"digits": 30, "robust": False}]}
    shown = checkpoint_display_row(Result.from_eval_report(failed, config, name="runs/add2"))
    assert (shown["robust LG"], shown["largest N tested"]) == ("none: fails at 30", 30)


def test_a_run_result_and_its_row_with_and_without_an_evaluation():
    summary = {"task": "add2", "samples": 20, "d": 9, "params": 468, "iterations": 20, "seconds": 1.96,
               "cpu_seconds": 3.9, "final_loss": 0.5767, "eval": None}
    r = Result.from_run_summary(summary, name="r0").checked("summary.json")
    assert (r.robust_lg, r.train_seconds, r.levels) == (None, 3.9, [])
    assert run_row(r) == {"run": "r0", "task": "add2", "samples": 20, "expert runs read": "-",
                          "held-out check": "-", "d": 9, "iterations": 20,
                          "final loss": "5.77e-01", "model": "trained", "robust LG (model)": None,
                          "probabilistic LG (model)": None, "model tested by": "not evaluated",
                          "robust LG (trained, before fine-tuning)": "-",  # not fine-tuned
                          "CPU seconds": 3.9, "wall seconds": 2.0}  # CPU seconds are the process time
    checked = summary | {"traces": {"total": 4195}, "agreement": {
        "agreed": True, "checked": {"digits": [4, 8]}, "data": {"rounds": 1}}}
    row = run_row(Result.from_run_summary(checked, name="r2"))
    assert row["expert runs read"] == 4195
    assert row["held-out check"] == "agreed (4-8 digits, data grown 1 round)"
    departed = checked | {"agreement": {"agreed": False, "checked": {"digits": [4, 6]},
                                        "data": {"rounds": 0}}}
    assert run_row(Result.from_run_summary(departed, name="r3"))["held-out check"] == "NOT ENOUGH DATA"
    old = Result.from_run_summary(summary | {"cpu_seconds": None}, name="old")
    assert run_row(old)["CPU seconds"] == "n/a"
    evaluated = summary | {"final_loss": None, "eval": {"robust_max_digits": 3, "probabilistic_max_digits": 5,
                                                        "levels": [LEVEL]}}
    row = run_row(Result.from_run_summary(evaluated, name="r1"))
    assert (row["robust LG (model)"], row["probabilistic LG (model)"], row["final loss"]) == (3, 5, "nan")


def test_a_fine_tuned_runs_row_shows_the_model_it_delivers_and_what_dfst_eval_measured():
    """RUN/model of a fine-tuned run: its d (grown), its LG (the run's own check, then dfst eval's
    in its place), and the trained weights' LG labelled as before fine-tuning, in words."""
    failing = {"digits": 10, "instances": 47, "exact": 30, "robust": False, "probabilistic": False}
    passing = [LEVEL | {"digits": n, "probabilistic": True} for n in (10, 100)]
    summary = {"task": "add2", "samples": 20, "d": 6, "params": 258, "iterations": 4000, "seconds": 59.5,
               "cpu_seconds": 48.8, "final_loss": 0.03,
               "eval": {"robust_max_digits": 0, "probabilistic_max_digits": 0, "levels": [failing]},
               "finetune": {"d": [6, 8], "eval_plain": {"robust_max_digits": 100,
                                                        "probabilistic_max_digits": 100, "levels": passing}}}
    r = Result.from_run_summary(summary, name="r").checked("summary.json")
    row, shown = run_row(r), run_display_row(r)
    assert (row["d"], row["model"], row["robust LG (model)"]) == (8, "fine-tuned", 100)
    assert row["model tested by"] == "the run's own check, 10 to 100 digits"
    assert row["robust LG (trained, before fine-tuning)"] == 0
    assert shown["robust LG (trained, before fine-tuning)"] == "none: fails at 10"
    report = {"task": "add2", "mode": "plain", "robust_max_digits": 10000, "probabilistic_max_digits": 10000,
              "levels": [LEVEL | {"digits": n} for n in (10, 100, 1000, 10000)]}
    evaluated = run_row(r.with_model_eval(report))
    assert (evaluated["robust LG (model)"], evaluated["model tested by"]) == \
        (10000, "dfst eval (plain h), 10 to 10,000 digits")
    failed = summary | {"finetune": {"error": "no automaton"}}
    assert run_row(Result.from_run_summary(failed, name="f"))["model"] == "trained (fine-tuning failed)"


def test_report_runs_reads_dfst_evals_measure_of_the_runs_model(tmp_path):
    """A run with RUN/model/eval.json (dfst eval RUN ran): its row holds that measure."""
    from dfst.results import read_run_result

    run = tmp_path / "run"
    (run / "model").mkdir(parents=True)
    summary = {"task": "add2", "samples": 20, "d": 6, "params": 258, "iterations": 10, "seconds": 1.0,
               "cpu_seconds": 1.0, "final_loss": 0.5,
               "eval": {"robust_max_digits": 10, "probabilistic_max_digits": 10, "levels": [LEVEL]}}
    (run / "summary.json").write_text(json.dumps(summary))
    assert read_run_result(run).robust_lg == 10
    report = {"task": "add2", "mode": "plain", "robust_max_digits": 0, "probabilistic_max_digits": 0,
              "levels": [LEVEL | {"digits": 30, "robust": False}]}
    (run / "model" / "eval.json").write_text(json.dumps(report))
    row = run_display_row(read_run_result(run))
    assert row["robust LG (model)"] == "none: fails at 30" and row["model tested by"].startswith("dfst eval")
