"""Fuzz every reader of a user's file: a valid object or a one-line DfstError, nothing else.

Inputs are random bytes, random JSON and mutations (byte changes, cuts, insertions, deletions)
of a valid file of each kind: agent JSON, PTO dataset zip, checkpoint config.json and
model.safetensors, a baseline result, an @FILE operand, a training state. Any other exception,
or an example slower than the deadline, fails the test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dfst.automata import Transducer, load_transducer
from dfst.cli.app import read_operand
from dfst.data import PtoDataset, load_dataset, record_dataset, save_dataset
from dfst.errors import DfstError
from dfst.model.checkpoint import CONFIG_FILE, TENSORS, WEIGHTS_FILE, load_checkpoint, save_checkpoint
from dfst.model.compile import compile_agent
from dfst.results import Result, load_results
from dfst.tasks import TASKS
from dfst.train.state import load_train_state, save_train_state

FUZZ = settings(max_examples=60, deadline=2000, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
AGENT = TASKS["add2"].agent


class Blob(bytes):
    """A valid file's bytes, shown by size when hypothesis reports a failing example."""

    def __repr__(self) -> str:
        return f"<{len(self):,} bytes>"


def clean(read, *args):
    """What the reader returns, or None for a DfstError; any other exception propagates."""
    try:
        return read(*args)
    except DfstError as exc:
        assert "\n" not in str(exc)
        return None


@st.composite
def mutated(draw, base: bytes) -> bytes:
    """`base` after one to four random edits: set a byte, cut the tail, insert or delete a run."""
    data = bytearray(base)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["set", "cut", "insert", "delete"]))
        i = draw(st.integers(0, max(len(data) - 1, 0)))
        if op == "set" and data:
            data[i] = draw(st.integers(0, 255))
        elif op == "cut":
            del data[i:]
        elif op == "insert":
            data[i:i] = draw(st.binary(min_size=1, max_size=16))
        else:
            del data[i:i + draw(st.integers(1, 64))]
    return bytes(data)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20)


def with_field(base: dict):
    """`base` with one field (top level or in its first rule) replaced by random JSON."""
    def edit(key_value):
        key, value = key_value
        data = json.loads(json.dumps(base))
        target = data["rules"][0] if key.startswith("rule.") and data.get("rules") else data
        target[key.removeprefix("rule.")] = value
        return json.dumps(data).encode()

    keys = st.sampled_from([*base, "rule.state", "rule.next", "rule.move", "rule.read"])
    return st.tuples(keys, json_values).map(edit)


def files(valid: bytes):
    """Random bytes, a mutation of the valid file, or the valid file itself."""
    return st.one_of(st.binary(max_size=512), mutated(valid), st.just(valid))


# ---- agent JSON ----------------------------------------------------------------------------------

AGENT_JSON = json.dumps(AGENT.to_dict()).encode()


@FUZZ
@given(raw=st.one_of(files(AGENT_JSON), with_field(AGENT.to_dict()),
                     json_values.map(lambda v: json.dumps(v).encode())))
def test_fuzz_agent_json(tmp_path, raw):
    (tmp_path / "agent.json").write_bytes(raw)
    agent = clean(load_transducer, tmp_path / "agent.json")
    assert agent is None or isinstance(agent, Transducer)


# ---- dataset zip ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def dataset_bytes(tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("data") / "d.pto.zip"
    save_dataset(record_dataset(TASKS["add2"], 4, 3, seed=0), path)
    return Blob(path.read_bytes())


@FUZZ
@given(data=st.data())
def test_fuzz_dataset_zip(tmp_path, dataset_bytes, data):
    raw = data.draw(files(dataset_bytes))
    (tmp_path / "d.pto.zip").write_bytes(raw)
    ds = clean(load_dataset, tmp_path / "d.pto.zip")
    assert ds is None or isinstance(ds, PtoDataset) and ds.samples >= 1


# ---- checkpoint ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def checkpoint_files(tmp_path_factory) -> dict[str, bytes]:
    directory = save_checkpoint(compile_agent(AGENT), tmp_path_factory.mktemp("ck") / "model",
                                {"source": "test"})
    # a checkpoint from elsewhere (no manifest, and a config that names none), so that the fuzzed
    # bytes reach the parser rather than the manifest's check (tests/test_integrity.py)
    config = json.loads((directory / CONFIG_FILE).read_text())
    del config["manifest"]
    return {CONFIG_FILE: Blob(json.dumps(config).encode()),
            WEIGHTS_FILE: Blob((directory / WEIGHTS_FILE).read_bytes())}


@FUZZ
@given(data=st.data())
def test_fuzz_checkpoint(tmp_path, checkpoint_files, data):
    config = json.loads(checkpoint_files[CONFIG_FILE])
    damaged = data.draw(st.sampled_from([CONFIG_FILE, WEIGHTS_FILE, "both"]))
    raw = dict(checkpoint_files)
    if damaged in (CONFIG_FILE, "both"):
        raw[CONFIG_FILE] = data.draw(st.one_of(files(checkpoint_files[CONFIG_FILE]), with_field(config)))
    if damaged in (WEIGHTS_FILE, "both"):
        raw[WEIGHTS_FILE] = data.draw(files(checkpoint_files[WEIGHTS_FILE]))
    directory = tmp_path / "ck"
    directory.mkdir(exist_ok=True)
    for name, content in raw.items():
        (directory / name).write_bytes(content)
    loaded = clean(load_checkpoint, directory)
    if loaded is not None:
        model, _ = loaded
        assert all(torch.isfinite(getattr(model, name)).all() for name in TENSORS)


# ---- baseline results ----------------------------------------------------------------------------

RESULT = {"system": "NTM", "task": "add2", "seed": 0, "samples": 10, "params": 100, "max_train_digits": 3,
          "robust_lg": 3, "probabilistic_lg": 4, "train_seconds": 1.5, "hardware": "cpu"}


@FUZZ
@given(raw=st.one_of(files(json.dumps(RESULT).encode()), with_field(RESULT)))
def test_fuzz_results(tmp_path, raw):
    (tmp_path / "r.json").write_bytes(raw)
    results = clean(load_results, tmp_path)
    assert results is None or isinstance(results, list) and all(isinstance(r, Result) for r in results)


# ---- operand files -------------------------------------------------------------------------------

@FUZZ
@given(raw=st.one_of(st.binary(max_size=256), st.text(alphabet="0123456789 \n\t_-x", max_size=256)
                     .map(str.encode)))
def test_fuzz_operand_file(tmp_path, raw):
    (tmp_path / "a.txt").write_bytes(raw)
    operand = clean(read_operand, f"@{tmp_path / 'a.txt'}")
    assert operand is None or isinstance(operand, str) and not any(c.isspace() for c in operand)


# ---- training state ------------------------------------------------------------------------------

def model_and_optimizer():
    model = compile_agent(AGENT)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, foreach=False)
    return model, optimizer


@pytest.fixture(scope="module")
def state_bytes(tmp_path_factory) -> bytes:
    model, optimizer = model_and_optimizer()
    sum(getattr(model, name).sum() for name in TENSORS).backward()
    optimizer.step()  # so that the Adam slots exist
    path = tmp_path_factory.mktemp("state") / "train_state.safetensors"
    save_train_state(path, model, optimizer, {"iteration": 1})
    return Blob(path.read_bytes())


@FUZZ
@given(data=st.data())
def test_fuzz_train_state(tmp_path, state_bytes, data):
    raw = data.draw(files(state_bytes))
    (tmp_path / "s.safetensors").write_bytes(raw)
    model, optimizer = model_and_optimizer()
    info = clean(load_train_state, tmp_path / "s.safetensors", model, optimizer)
    assert info is None or isinstance(info, dict)
    if info is not None:  # a restored state must be usable: one more step does not crash
        sum(getattr(model, name).sum() for name in TENSORS).backward()
        optimizer.step()


def test_valid_files_load(tmp_path, dataset_bytes, checkpoint_files, state_bytes):
    """The bases of the mutations are valid, so the fuzz tests do reach past the first check."""
    (tmp_path / "agent.json").write_bytes(AGENT_JSON)
    assert load_transducer(tmp_path / "agent.json") == AGENT
    (tmp_path / "d.pto.zip").write_bytes(dataset_bytes)
    assert load_dataset(tmp_path / "d.pto.zip").samples == 4
    directory = Path(tmp_path / "ck")
    directory.mkdir()
    for name, content in checkpoint_files.items():
        (directory / name).write_bytes(content)
    load_checkpoint(directory)
    (tmp_path / "s.safetensors").write_bytes(state_bytes)
    assert load_train_state(tmp_path / "s.safetensors", *model_and_optimizer()) == {"iteration": 1}
    (tmp_path / "res").mkdir()
    (tmp_path / "res" / "r.json").write_text(json.dumps(RESULT))
    assert load_results(tmp_path / "res")[0].robust_lg == 3
