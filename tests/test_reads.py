"""Every expert run a learner reads (`dfst.data.reads`), counted where it is read: by the samplers, by
training's summary, and re-derived for stored results that predate the count (`dfst table --traces`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli_helpers import run
from dfst.data import SAMPLERS
from dfst.data.reads import digits_span, part, reads_text, traces_read
from dfst.results.store import load_results
from dfst.studies.traces import Rederived, traces_rows
from dfst.tasks import get_task

STORED = Path(__file__).resolve().parents[1] / "results" / "dfst"


@pytest.mark.parametrize("sampler", ["contexts", "cover", "pairs"])
def test_a_sampler_that_reads_candidates_counts_them_and_its_fill_up(sampler):
    data = SAMPLERS[sampler](get_task("add2"), 20, 3, 1)
    traces = traces_read(data.sampling, data.samples)
    fill = traces.get("fill-up", {}).get("runs", 0)
    assert traces["candidates"]["runs"] == data.sampling["queries"] > data.samples
    assert data.sampling["covering"] + fill == data.samples
    assert traces["total"] == data.sampling["queries"] + fill


def test_a_given_dataset_is_read_as_kept_and_counterexamples_and_validation_add_up():
    sampling = {"rule": "uniform", "min_digits": 1, "max_digits": 3, "counterexamples": [["1011", "1"]]}
    traces = traces_read(sampling, 9, part(40, (4, 6)))
    assert traces["kept"] == {"runs": 8, "digits": [1, 3]}
    assert traces["counterexamples"] == {"runs": 1, "digits": [4, 4]}
    assert traces["total"] == 49 and digits_span(traces) == (1, 6)
    assert reads_text(traces) == "8 kept (1-3 digits), 1 counterexamples (4-4), 40 validation (4-6)"


def test_a_stored_run_re_derived_reads_what_it_recorded():
    """A stored add2 result recorded `queries` (its candidates and validation, before the fill-up was
    counted): the re-drawn sampler gives the same candidates, the fill-up besides, and what
    `dfst migrate --traces` stored."""
    result = next(r for r in load_results(STORED) if r.task == "add2" and r.system == "DFST")
    stored = result.details.pop("traces")
    traces = Rederived().traces_of(result)
    assert traces == stored
    assert traces["candidates"]["runs"] + traces["validation"]["runs"] == result.details["queries"]
    assert traces["total"] == result.details["queries"] + traces.get("fill-up", {}).get("runs", 0)


def test_migrate_traces_stores_the_reads_and_changes_nothing_else(tmp_path, capsys):
    results = tmp_path / "results"
    results.mkdir()
    source = STORED / "add2-trained-s1.json"
    before = json.loads(source.read_text())
    stored = before["details"].pop("traces")
    (results / source.name).write_text(json.dumps(before))
    (results / "notes.json").write_text('{"mine": 1}')
    code, out, err = run(capsys, "migrate", "--traces", "--results", results, "--json")
    assert code == 0, err
    assert json.loads(out)["migrated"] == [str(results / source.name)]
    after = json.loads((results / source.name).read_text())
    assert after["details"].pop("traces") == stored and after == before
    assert (results / "notes.json").read_text() == '{"mine": 1}'
    code, out, _ = run(capsys, "migrate", "--traces", "--results", results, "--json")
    assert code == 0 and json.loads(out)["migrated"] == []


def test_dfst_table_traces_prints_one_row_per_task_and_refuses_two_tables(tmp_path, capsys):
    results = tmp_path / "results"
    results.mkdir()
    for path in sorted(STORED.glob("add2-*-s[01].json")):
        shutil.copy(path, results / path.name)
    code, out, err = run(capsys, "table", "--traces", "--results", results, "--markdown")
    assert code == 0, err
    rows = traces_rows(load_results(results))
    assert len(rows) == 1 and rows[0]["seeds"] == "2 of 2" and rows[0]["expert runs read (digits)"] in out
    code, _, err = run(capsys, "table", "--traces", "--headline", "--results", results)
    assert code == 2 and len(err.strip().splitlines()) == 1, err


def test_a_dataset_made_in_python_without_lengths_is_counted_at_its_own():
    traces = traces_read({"rule": "read", "queries": 249}, 249, None, lengths=(1, 6))
    assert traces["candidates"] == {"runs": 249, "digits": [1, 6]} and traces["total"] == 249
    with pytest.raises(ValueError, match="lengths"):
        traces_read({"rule": "read", "queries": 249}, 249)
