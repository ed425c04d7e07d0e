"""The baseline framework, RPNI, the LSTM, and the `dfst baseline` / `dfst table` commands."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from cli_helpers import assert_one_line_error, run, run_json
from dfst.automata import HALT_MOVE
from dfst.baselines import lstm, rpni
from dfst.baselines.common import evaluate_predictor, length_ladder
from dfst.data import record_dataset
from dfst.errors import DfstError
from dfst.extract import extract
from dfst.grid.rollout import rollout
from dfst.results import MARK_END, MARK_START, Result, replace_block, save_result
from dfst.tasks import get_task

ADD2 = get_task("add2")


pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py


def learned_from(samples: int):
    ds = record_dataset(ADD2, samples, 3, seed=0)
    return extract(None, ds, "rpni", agent=ADD2.agent).agent


def test_rpni_with_enough_ptos_learns_an_automaton_robust_at_200_digits():
    agent = learned_from(160)
    assert all(r.next == agent.final for r in agent.rules.values() if r.move == HALT_MOVE)
    report = rpni.evaluate_agent(ADD2, agent, (10, 200), random=10)
    assert report["robust_max_digits"] == 200
    # The same automaton through the table engine, judged against Python's sums.
    results = rollout(ADD2, ADD2.random_instances(200, 5, seed=7), agent=agent)
    assert all(r.exact and r.answer == ADD2.expected(r) for r in results)


@pytest.mark.parametrize("samples", [1, 2])
def test_rpni_with_one_or_two_ptos_is_not_robust(samples):
    report = rpni.evaluate_agent(ADD2, learned_from(samples), (10, 200), random=10)
    assert report["robust_max_digits"] < 200


def test_rpni_search_reports_a_robust_count_and_its_automaton():
    result = rpni.run(ADD2, seed=0, config={"eval_digits": "10,200", "search_digits": 200}, progress=False)
    needed = result.details["samples_needed"]
    assert result.samples == needed and result.robust_lg == 200
    tried = {t["samples"]: t["robust"] for t in result.details["search"]}
    assert tried[needed] and not any(ok for n, ok in tried.items() if n < needed)


def test_rpni_ladder_that_never_reaches_records_no_sample_count_and_the_table_says_so(capsys, tmp_path):
    """The cap of the ladder is no sample count: samples null, samples_cap the top of the ladder, and
    `dfst table` says "not reached (up to N)", or how many seeds reached where some did."""
    config = {"ladder": "1,2", "eval_digits": "10", "search_digits": 200}
    result = rpni.run(ADD2, seed=0, config=config, progress=False)
    assert result.samples is None and result.details["samples_cap"] == 2
    assert result.sample_search() == (None, 2)
    root = tmp_path / "results"
    save_result(result, root / "rpni-s0.json")
    row = run_json(capsys, "table", "--results", root)[0]
    assert (row["samples"], row["samples_reached"], row["samples_cap"]) == (None, 0, 2)
    code, out, _ = run(capsys, "table", "--results", root, "--markdown")
    assert code == 0 and "| not reached (up to 2) |" in out
    reached = rpni.run(ADD2, seed=1, config=config | {"ladder": "1,300"}, progress=False)
    save_result(reached, root / "rpni-s1.json")
    code, out, _ = run(capsys, "table", "--results", root, "--markdown")
    assert f"| {reached.samples:,} (1 of 2 seeds; 1 not reached up to 2) |" in out
    old = Result.from_dict(result.to_dict() | {"samples": 2, "details": {"samples_needed": None,
                                                                        "search": [{"samples": 2}]}}, "old")
    assert old.sample_search() == (None, 2)  # a file from before samples_cap: its cap is no count


def test_evaluate_predictor_stops_after_a_length_with_nothing_exact():
    scores = evaluate_predictor(ADD2, lambda insts: [None] * len(insts), (5, 10, 20),
                                stop_when_none_exact=True)
    assert [lv["digits"] for lv in scores["levels"]] == [5] and scores["robust_lg"] == 0
    python = evaluate_predictor(ADD2, lambda insts: [ADD2.expected(i) for i in insts], (5, 10))
    assert python["robust_lg"] == python["probabilistic_lg"] == 10


def test_length_ladder():
    assert length_ladder(20) == [20, 40, 100, 200, 400, 1000, 2000]
    assert length_ladder(10, 100) == [10, 20, 50, 100]


def test_lstm_curriculum_rises_to_the_training_length():
    lengths = [lstm.curriculum_digits(step, 100, 20, 0.5) for step in range(100)]
    assert lengths[0] == 1 and lengths[49:] == [20] * 51
    assert all(a <= b for a, b in zip(lengths, lengths[1:]))
    assert lstm.curriculum_digits(0, 100, 20, 0.0) == 20


def tiny_lstm(base: int = 2) -> lstm.Seq2Seq:
    torch.manual_seed(0)
    return lstm.Seq2Seq(lstm.LstmConfig(base, hidden=32, embed=8))


def test_lstm_forward_shapes_and_answers():
    model, instances = tiny_lstm(), ADD2.random_instances(4, 3, seed=1)
    src, lengths = lstm.encode_sources(model.cfg, instances)
    dec_in, target = lstm.encode_targets(model.cfg, ADD2, instances)
    assert src.shape == (3, 9) and lengths.tolist() == [9, 9, 9]
    assert model(src, lengths, dec_in).shape == (*target.shape, 3)
    answers = lstm.predictor(model, ADD2)(instances)
    assert len(answers) == 3 and all(a is None or set(a) <= {"0", "1"} for a in answers)


def test_lstm_decodes_least_significant_first():
    assert lstm._answer([1, 1, 0, 2, 1], 2) == "11"  # digits 1,1,0 then end: 011 -> "11"
    assert lstm._answer([2, 1], 2) is None


def test_lstm_loss_decreases_with_training_steps():
    model = tiny_lstm()
    batch = ADD2.random_instances(4, 8, seed=2)
    opt = torch.optim.Adam(model.parameters(), lr=2e-2)
    losses = []
    for _ in range(8):
        loss = lstm.loss_on(model, ADD2, batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert np.isfinite(losses).all() and losses[-1] < 0.8 * losses[0]


def test_lstm_run_is_reproducible_and_counts_its_parameters():
    cfg = {"steps": 3, "batch": 4, "hidden": 8, "embed": 4, "eval_top": 40, "random": 2}
    first = lstm.run(ADD2, seed=3, config=cfg, progress=False)
    second = lstm.run(ADD2, seed=3, config=cfg, progress=False)
    assert first.details["final_loss"] == second.details["final_loss"]
    assert first.params == sum(p.numel() for p in tiny_params(8, 4)) and first.details["pairs_drawn"] == 12
    assert 0 < first.samples <= 12  # the distinct pairs of the 12 drawn
    assert first.levels[0]["digits"] == 20 and first.max_train_digits == 20


def tiny_params(hidden: int, embed: int):
    return lstm.Seq2Seq(lstm.LstmConfig(2, hidden=hidden, embed=embed)).parameters()


# ----------------------------------------------------------------------------- the CLI

FAST_RPNI = ["--config", "samples=80", "--config", "eval_digits=10,100", "--no-progress"]


def test_baseline_command_stores_the_result(capsys, tmp_path):
    out = tmp_path / "r.json"
    shown = run_json(capsys, "baseline", "rpni", "add2", "--out", out, *FAST_RPNI)
    stored = json.loads(out.read_text())
    assert stored["system"] == "RPNI" and stored["samples"] == 80 and stored["config"]["samples"] == 80
    assert stored["robust_lg"] == shown["robust_lg"] == 100
    code, _, err = run(capsys, "baseline", "rpni", "add2", "--out", out, *FAST_RPNI)
    assert_one_line_error(code, err, "already exists")
    code, _, err = run(capsys, "baseline", "rpni", "add2", "--out", out, "--force", *FAST_RPNI)
    assert code == 0, err


@pytest.mark.parametrize("argv,fragment", [
    (["baseline", "nope", "add2"], "unknown baseline 'nope'"),
    (["baseline", "rpni", "add3"], "unknown task 'add3'"),
    (["baseline", "rpni", "add2", "--config", "nope=1"], "unknown config key 'nope'"),
    (["baseline", "rpni", "add2", "--config", "samples=many"], "expected int"),
    (["baseline", "rpni", "add2", "--config", "bisect=maybe"], "expected true or false"),
    (["baseline", "rpni", "add2", "--config", "samples"], "not KEY=VALUE"),
    (["baseline", "rpni", "add2", "--config", "sampler=best"], "unknown sampler"),
    (["table", "--results", "/nonexistent/results"], "does not exist"),
])
def test_baseline_and_table_errors(capsys, tmp_path, argv, fragment):
    code, _, err = run(capsys, *argv, "--out", tmp_path / "x.json") if argv[0] == "baseline" \
        else run(capsys, *argv)
    assert_one_line_error(code, err, fragment)


def stored_results(capsys, tmp_path):
    root = tmp_path / "results"
    for seed in (0, 1):
        run_json(capsys, "baseline", "rpni", "add2", "--seed", seed, "--out",
                 root / "baselines" / f"rpni-add2-s{seed}.json", "--config", "samples=3", *FAST_RPNI[2:])
    run_json(capsys, "baseline", "lstm", "add2", "--out", root / "lstm.json", "--config", "steps=2",
             "--config", "hidden=8", "--config", "eval_top=40", "--no-progress")
    (root / "unrelated.json").write_text('{"not": "a result"}')
    return root


def test_table_json_aggregates_seeds(capsys, tmp_path):
    root = stored_results(capsys, tmp_path)
    rows = run_json(capsys, "table", "--results", root)
    assert [(r["system"], r["task"], r["seeds"]) for r in rows] == [("LSTM", "add2", 1), ("RPNI", "add2", 2)]
    for key in ("system", "task", "samples", "params", "max_train_digits", "robust_lg", "probabilistic_lg"):
        assert all(key in r for r in rows)
    seeds = [json.loads((root / "baselines" / f"rpni-add2-s{s}.json").read_text()) for s in (0, 1)]
    assert rows[1]["robust_lg"] == max(s["robust_lg"] for s in seeds) and rows[1]["samples"] == 3
    (root / "broken.json").write_text('{"system": "X", "task": 5}')
    code, _, err = run(capsys, "table", "--results", root)
    assert_one_line_error(code, err, "broken.json")


def test_table_piped_is_whole_and_comes_as_markdown_or_csv(capsys, tmp_path):
    """Piped (capsys is no terminal), the rich table keeps every header and cell whole: at rich's 80
    columns "samples" was cut to "sam…"; --csv gives the numbers as they are."""
    import csv
    import io

    root = stored_results(capsys, tmp_path)
    code, out, _ = run(capsys, "table", "--results", root)
    assert code == 0 and "…" not in out
    assert all(column in out for column in ("system", "samples", "probabilistic LG", "hardware"))
    assert max(len(line) for line in out.splitlines()) > 80
    code, out, _ = run(capsys, "table", "--results", root, "--markdown")
    assert code == 0 and out.startswith("| system | task |") and "| RPNI | add2 | 2 |" in out
    code, out, _ = run(capsys, "table", "--results", root, "--csv")
    table = list(csv.DictReader(io.StringIO(out)))
    rows = run_json(capsys, "table", "--results", root)
    assert code == 0 and [r["system"] for r in table] == [r["system"] for r in rows]
    assert table[1]["samples"] == str(rows[1]["samples"]) and table[1]["seeds"] == "2"
    code, _, err = run(capsys, "table", "--results", root, "--csv", "--markdown")
    assert_one_line_error(code, err, "--markdown and --csv")


def test_table_rewrites_only_the_readme_block(capsys, tmp_path):
    root = stored_results(capsys, tmp_path)
    before, after = "# Title\n\nintro\n\n## Comparison\n" + MARK_START, MARK_END + "\n\n## Next\ntext ✓\n"
    readme = tmp_path / "README.md"
    readme.write_text(before + "\nold table\n" + after)
    code, _, err = run(capsys, "table", "--results", root, "--readme", readme)
    text = readme.read_text()
    assert code == 0, err
    assert text.startswith(before) and text.endswith(after) and "old table" not in text
    assert "| RPNI | add2 | 2 |" in text
    assert replace_block(text, "x\n") == before + "\nx\n" + after


def test_rpni_can_learn_from_the_dfsts_trace_only_samples():
    """The comparison on the same terms: RPNI given the PTOs the DFST's default sampler chooses, and
    its row says which sampler."""
    from dfst.data import SAMPLERS

    traces = rpni.record_traces(ADD2, 20, 3, 0, "contexts")
    ds = SAMPLERS["contexts"](ADD2, 20, 3, 0)
    assert len(traces) == ds.samples == 20 and all((t == ds.trace(i)).all() for i, t in enumerate(traces))
    config = {"samples": 20, "sampler": "contexts", "eval_digits": "10", "random": 2}
    assert rpni.run(ADD2, seed=0, config=config, progress=False).system == "RPNI (contexts sampler)"


def test_edsm_learns_from_the_same_ptos_and_is_named_with_its_sampler():
    """EDSM (AALpy's evidence-driven merging) on the PTOs RPNI would get: enough of them give an
    automaton robust at 200 digits, one PTO does not, and the result names the learner and sampler."""
    from dfst.baselines import edsm

    for samples, robust in ((160, True), (1, False)):
        agent = extract(None, record_dataset(ADD2, samples, 3, seed=0), "edsm", agent=ADD2.agent).agent
        assert (rpni.evaluate_agent(ADD2, agent, (10, 200), random=10)["robust_max_digits"] == 200) == robust
    config = {"samples": 20, "sampler": "contexts", "eval_digits": "10", "random": 2}
    result = edsm.run(ADD2, seed=0, config=config, progress=False)
    assert result.system == "EDSM (contexts sampler)" and result.config["learner"] == "edsm"
    with pytest.raises(DfstError, match="unknown learner"):
        rpni.run(ADD2, seed=0, config=config | {"learner": "lstar"}, progress=False)
