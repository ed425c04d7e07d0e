"""PTO datasets: traces equal the engine's, files are byte-reproducible, every kind of damage is caught."""

from __future__ import annotations

import dataclasses
import io
import json
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest

from dfst.automata import MOVE_INDEX, MOVES
from dfst.data import (
    MEMBERS,
    PtoDataset,
    load_dataset,
    record_dataset,
    save_dataset,
    summarize,
)
from dfst.errors import DfstError
from dfst.grid.rollout import run_table
from dfst.tasks import TASKS
from dfst.tasks.base import Instance, random_operand

STOP = MOVE_INDEX["S"]
SAMPLES, MAX_DIGITS, SEED = 8, 3, 7


@pytest.fixture(scope="module")
def datasets() -> dict[str, PtoDataset]:
    return {name: record_dataset(task, SAMPLES, MAX_DIGITS, SEED) for name, task in TASKS.items()}


@pytest.fixture(scope="module")
def saved(datasets, tmp_path_factory) -> Path:
    """The add10 dataset on disk, the starting point of every damaged file."""
    path = tmp_path_factory.mktemp("pto") / "add10.pto.zip"
    save_dataset(datasets["add10"], path)
    return path


# --- recording ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", TASKS)
def test_traces_equal_the_engine_and_stop_once(datasets, name):
    task, ds = TASKS[name], datasets[name]
    assert ds.samples == SAMPLES and len(ds.operands) == SAMPLES
    for i, (a, b) in enumerate(ds.operands):
        inst = Instance(a, b)
        expected = run_table(task.agent, task.layout(inst), task.max_steps(inst), record=True).trace
        trace = ds.trace(i)
        assert trace.dtype == np.uint8 and np.array_equal(trace, expected)
        assert trace[-1, 2] == STOP and np.count_nonzero(trace[:, 2] == STOP) == 1
    assert ds.steps == sum(len(ds.trace(i)) for i in range(ds.samples))


@pytest.mark.parametrize("name", TASKS)
def test_only_the_three_channels_are_stored(datasets, name, tmp_path):
    ds, task = datasets[name], TASKS[name]
    save_dataset(ds, tmp_path / "d.pto.zip")
    with zipfile.ZipFile(tmp_path / "d.pto.zip") as zf:
        assert zf.namelist() == ["meta.json", "reads.npy", "writes.npy", "moves.npy", "offsets.npy"]
        meta = json.loads(zf.read("meta.json"))
    assert set(meta) == {"format", "version", "task", "base", "k", "d", "seed", "sampling", "samples",
                         "steps", "alphabet", "moves", "operands", "dfst_version"}
    assert (meta["k"], meta["d"]) == (task.agent.k, task.agent.d)
    assert not any(json.dumps(q) in json.dumps(meta) for q in task.agent.states)  # no state names
    fields = {f.name for f in dataclasses.fields(PtoDataset)}
    assert not any("state" in f for f in fields)
    assert all(a.ndim == 1 for a in (ds.reads, ds.writes, ds.moves, ds.offsets))


def test_lengths_are_uniform_in_range_with_nonzero_leading_digit():
    ds = record_dataset(TASKS["add10"], 60, 4, seed=3, min_digits=2)
    lengths = [(len(a), len(b)) for a, b in ds.operands]
    assert {n for pair in lengths for n in pair} == {2, 3, 4}
    assert any(n != m for n, m in lengths)  # the two lengths are drawn independently
    assert all(x[0] != "0" for pair in ds.operands for x in pair)
    assert ds.sampling == {"rule": "uniform-lengths", "min_digits": 2, "max_digits": 4}


def test_sampling_rule_is_the_documented_one():
    ds = record_dataset(TASKS["mult2"], 12, 5, seed=11, min_digits=1)
    rng = np.random.default_rng(11)
    expected = []
    for _ in range(12):
        n, m = rng.integers(1, 6, size=2)
        expected.append((random_operand(rng, int(n), 2), random_operand(rng, int(m), 2)))
    assert ds.operands == expected


@pytest.mark.parametrize("kwargs", [dict(samples=0), dict(min_digits=0), dict(min_digits=4, max_digits=3),
                                    dict(seed=-1)])
def test_bad_arguments_raise(kwargs):
    args = dict(samples=2, max_digits=3, seed=0) | kwargs
    with pytest.raises(DfstError):
        record_dataset(TASKS["add2"], **args)


def test_an_expert_that_does_not_halt_is_an_error():
    short = dataclasses.replace(TASKS["add2"], step_bound=lambda *_: 2)
    with pytest.raises(DfstError, match="did not halt"):
        record_dataset(short, 2, 3, seed=0)


def test_progress_is_called_per_sample():
    seen: list[int] = []
    record_dataset(TASKS["add2"], 5, 2, seed=0, progress=seen.append)
    assert seen == [1, 2, 3, 4, 5]


def test_summary(datasets):
    ds = datasets["mult10"]
    s = summarize(ds)
    lengths = [len(ds.trace(i)) for i in range(ds.samples)]
    triples = {tuple(row) for i in range(ds.samples) for row in ds.trace(i).tolist()}
    assert (s["task"], s["samples"], s["steps"]) == ("mult10", SAMPLES, sum(lengths))
    assert (s["steps_min"], s["steps_max"]) == (min(lengths), max(lengths))
    assert s["steps_mean"] == pytest.approx(sum(lengths) / len(lengths))
    assert 1 <= s["digits_min"] <= s["digits_max"] <= MAX_DIGITS
    assert s["distinct_triples"] == len(triples)
    assert list(s["moves"]) == list(MOVES) and sum(s["moves"].values()) == ds.steps
    assert s["moves"]["S"] == SAMPLES
    json.dumps(s)  # plain JSON


# --- files -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", TASKS)
def test_same_seed_gives_byte_identical_files(name, datasets, tmp_path):
    again = record_dataset(TASKS[name], SAMPLES, MAX_DIGITS, SEED)
    save_dataset(datasets[name], tmp_path / "a.pto.zip")
    save_dataset(again, tmp_path / "b.pto.zip")
    assert (tmp_path / "a.pto.zip").read_bytes() == (tmp_path / "b.pto.zip").read_bytes()


def test_zip_entries_carry_no_time_or_platform(datasets, tmp_path):
    save_dataset(datasets["add2"], tmp_path / "a.pto.zip")
    with zipfile.ZipFile(tmp_path / "a.pto.zip") as zf:
        infos = zf.infolist()
    assert [i.filename for i in infos] == list(MEMBERS)
    for info in infos:
        assert info.date_time == (1980, 1, 1, 0, 0, 0) and info.compress_type == zipfile.ZIP_DEFLATED
        assert (info.create_system, info.external_attr) == (3, 0o644 << 16)


@pytest.mark.parametrize("name", TASKS)
def test_different_seed_gives_different_files(name, datasets, tmp_path):
    other = record_dataset(TASKS[name], SAMPLES, MAX_DIGITS, SEED + 1)
    save_dataset(datasets[name], tmp_path / "a.pto.zip")
    save_dataset(other, tmp_path / "b.pto.zip")
    assert (tmp_path / "a.pto.zip").read_bytes() != (tmp_path / "b.pto.zip").read_bytes()


@pytest.mark.parametrize("name", TASKS)
def test_round_trip(name, datasets, tmp_path):
    ds = datasets[name]
    save_dataset(ds, tmp_path / "a.pto.zip")
    back = load_dataset(tmp_path / "a.pto.zip")
    assert back == ds
    for field in ("task", "base", "k", "d", "seed", "sampling", "operands", "alphabet"):
        assert getattr(back, field) == getattr(ds, field)
    for field in ("reads", "writes", "moves", "offsets"):
        a, b = getattr(back, field), getattr(ds, field)
        assert a.dtype == b.dtype and np.array_equal(a, b)
    save_dataset(back, tmp_path / "b.pto.zip")
    assert (tmp_path / "a.pto.zip").read_bytes() == (tmp_path / "b.pto.zip").read_bytes()


def test_equality_sees_array_contents(datasets):
    ds = datasets["add2"]
    moves = ds.moves.copy()
    moves[0] ^= 1
    assert dataclasses.replace(ds, moves=moves) != ds


def test_save_refuses_to_overwrite(datasets, tmp_path):
    path = tmp_path / "d.pto.zip"
    save_dataset(datasets["add2"], path)
    before = path.read_bytes()
    with pytest.raises(DfstError, match="already exists"):
        save_dataset(datasets["add10"], path)
    assert path.read_bytes() == before
    save_dataset(datasets["add10"], path, overwrite=True)
    assert load_dataset(path) == datasets["add10"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.pto.zip"]  # no temporary files left


def test_save_into_missing_directory(datasets, tmp_path):
    with pytest.raises(DfstError, match="does not exist"):
        save_dataset(datasets["add2"], tmp_path / "nope" / "d.pto.zip")


# --- damaged files -----------------------------------------------------------------------------------

def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def _write_zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def _npy(array: np.ndarray, allow_pickle: bool = False) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=allow_pickle)
    return buf.getvalue()


def _damaged(saved: Path, out: Path, meta=None, **arrays: np.ndarray) -> Path:
    """A copy of `saved` with meta.json edited by `meta` and some arrays replaced."""
    members = _members(saved)
    if meta is not None:
        data = json.loads(members["meta.json"])
        meta(data)
        members["meta.json"] = json.dumps(data).encode()
    for name, array in arrays.items():
        members[f"{name}.npy"] = _npy(array)
    return _write_zip(out, members)


def _array(saved: Path, name: str) -> np.ndarray:
    return np.load(io.BytesIO(_members(saved)[f"{name}.npy"]), allow_pickle=False)


def test_the_base_file_loads(saved):
    load_dataset(saved)  # so that each failure below is due to its damage alone


def test_missing_file(tmp_path):
    with pytest.raises(DfstError, match="does not exist"):
        load_dataset(tmp_path / "nope.pto.zip")


def test_directory(tmp_path):
    with pytest.raises(DfstError, match="directory"):
        load_dataset(tmp_path)


def test_plain_text_file(tmp_path):
    (tmp_path / "d.pto.zip").write_text("hello\n")
    with pytest.raises(DfstError, match="not a dfst PTO dataset"):
        load_dataset(tmp_path / "d.pto.zip")


@pytest.mark.parametrize("cut", [0.5, 0.9, -1, 10])
def test_truncated(saved, tmp_path, cut):
    data = saved.read_bytes()
    n = int(len(data) * cut) if isinstance(cut, float) else cut % len(data)
    (tmp_path / "d.pto.zip").write_bytes(data[:n])
    with pytest.raises(DfstError):
        load_dataset(tmp_path / "d.pto.zip")


@pytest.mark.parametrize("member", MEMBERS)
def test_flipped_byte_inside_a_member(saved, tmp_path, member):
    data = bytearray(saved.read_bytes())
    with zipfile.ZipFile(saved) as zf:
        info = zf.getinfo(member)
    name_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26: info.header_offset + 30])
    start = info.header_offset + 30 + name_len + extra_len
    data[start + info.compress_size // 2] ^= 0xFF
    (tmp_path / "d.pto.zip").write_bytes(bytes(data))
    with pytest.raises(DfstError, match="corrupted"):
        load_dataset(tmp_path / "d.pto.zip")


def test_zip_without_meta(saved, tmp_path):
    members = _members(saved)
    del members["meta.json"]
    with pytest.raises(DfstError, match="not a dfst PTO dataset"):
        load_dataset(_write_zip(tmp_path / "d.zip", members))


def test_zip_missing_an_array(saved, tmp_path):
    members = _members(saved)
    del members["writes.npy"]
    with pytest.raises(DfstError, match="writes.npy is missing"):
        load_dataset(_write_zip(tmp_path / "d.zip", members))


def test_bad_json(saved, tmp_path):
    members = _members(saved) | {"meta.json": b"{not json"}
    with pytest.raises(DfstError, match="not valid JSON"):
        load_dataset(_write_zip(tmp_path / "d.zip", members))


def _set(key, value):
    return lambda meta: meta.__setitem__(key, value)


@pytest.mark.parametrize("edit, message", [
    (_set("format", "dfst-agent"), "not a dfst PTO dataset"),
    (_set("version", 2), "unsupported .* version 2"),
    (lambda meta: meta.pop("operands"), "lacks 'operands'"),
    (lambda meta: meta.pop("k"), "lacks 'k'"),
    (_set("k", "eleven"), "not a non-negative integer"),
    (_set("alphabet", ["0", "1"]), "alphabet"),
    (_set("moves", ["L", "R", "U", "D", "S"]), "moves"),
    (lambda meta: meta["operands"].pop(), "operand pairs for 8 samples"),
    (_set("samples", 7), "operand pairs for 7 samples"),
    (_set("steps", 3), "meta.json says 3"),
])
def test_bad_meta(saved, tmp_path, edit, message):
    with pytest.raises(DfstError, match=message):
        load_dataset(_damaged(saved, tmp_path / "d.zip", meta=edit))


def _shift(delta):
    def edit(off):
        off[0] += delta
        return off
    return edit


@pytest.mark.parametrize("edit, message", [
    (_shift(1), "offsets run from 1"),
    (lambda off: off[:-1], "offsets has 8 entries"),
    (lambda off: np.concatenate([off[:-1], [off[-1] + 1]]), "offsets run from 0 to"),
    (lambda off: np.concatenate([off[:1], off[2:3], off[1:2], off[3:]]), "not increasing"),
    (lambda off: np.concatenate([off[:1], off[:1], off[2:]]), "not increasing"),
    (lambda off: off.astype(np.int32), "expected 1-D int64"),
])
def test_bad_offsets(saved, tmp_path, edit, message):
    offsets = edit(_array(saved, "offsets").copy())
    with pytest.raises(DfstError, match=message):
        load_dataset(_damaged(saved, tmp_path / "d.zip", offsets=offsets))


def _edit(name, index_fn, value):
    """Set one entry (chosen from the offsets) of channel `name` to `value`."""
    def edit(arrays):
        arrays[name][index_fn(arrays["offsets"])] = value
    return edit


@pytest.mark.parametrize("edit, message", [
    (_edit("reads", lambda off: 0, 11), "reads has value 11"),
    (_edit("writes", lambda off: 1, 200), "writes has value 200"),
    (_edit("moves", lambda off: 2, 5), "moves has value 5"),
    (_edit("moves", lambda off: off[1] - 1, 0), "sample 0 does not end with the move S"),
    (_edit("moves", lambda off: off[2] - 1, 3), "sample 1 does not end with the move S"),
    (_edit("moves", lambda off: off[1] - 2, STOP), "S before its end"),
])
def test_bad_channel_values(saved, tmp_path, edit, message):
    arrays = {name: _array(saved, name).copy() for name in ("reads", "writes", "moves", "offsets")}
    assert arrays["offsets"][1] >= 2  # sample 0 has a step before its stop
    edit(arrays)
    with pytest.raises(DfstError, match=message):
        load_dataset(_damaged(saved, tmp_path / "d.zip", **arrays))


@pytest.mark.parametrize("make", [
    lambda reads: reads.astype(np.int16),
    lambda reads: reads.reshape(1, -1),
    lambda reads: reads[:-1],
])
def test_bad_array_dtype_or_shape(saved, tmp_path, make):
    reads = make(_array(saved, "reads").copy())
    with pytest.raises(DfstError, match="reads"):
        load_dataset(_damaged(saved, tmp_path / "d.zip", reads=reads))


def test_pickled_array_is_refused(saved, tmp_path):
    members = _members(saved)
    members["moves.npy"] = _npy(np.array([object()] * 3, dtype=object), allow_pickle=True)
    with pytest.raises(DfstError, match="moves.npy is not a valid array"):
        load_dataset(_write_zip(tmp_path / "d.zip", members))


def test_garbage_array_member(saved, tmp_path):
    members = _members(saved) | {"offsets.npy": b"\x93NUMPY garbage"}
    with pytest.raises(DfstError, match="offsets.npy"):
        load_dataset(_write_zip(tmp_path / "d.zip", members))
