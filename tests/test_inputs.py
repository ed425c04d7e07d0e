"""dfst.io.inputs: every hostile file a user can point dfst at is a one-line DfstError, quickly.

Each case of issue 14's list that is about reading: a FIFO (blocked forever), a link to /dev/zero
(never ends), an over-cap file, JSON nested 100,000 deep (RecursionError), an encrypted zip member,
a zip bomb, a member whose header lies, a bad CRC, a truncated zip, safetensors headers that point
past the end or declare huge shapes.
"""

from __future__ import annotations

import io
import json
import os
import signal
import struct
import zipfile
from contextlib import contextmanager
from pathlib import Path

import pytest
import torch
from safetensors.torch import save as save_safetensors

from dfst.errors import DfstError
from dfst.io.inputs import (
    InputMissing,
    check_safetensors_header,
    load_safetensors_bytes,
    parse_json,
    read_bytes,
    read_json,
    read_json_if_exists,
    read_text,
    read_zip_members,
)
from dfst.io.limits import MAX_JSON_DEPTH, MAX_SAFETENSORS_HEADER, MAX_ZIP_MEMBERS, MiB


@contextmanager
def within(seconds: float):
    """Fail instead of hanging: a blocked read is the bug some of these tests look for."""
    def expire(*_):
        raise TimeoutError(f"still blocked after {seconds} s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def one_line(exc: pytest.ExceptionInfo, *fragments: str) -> str:
    message = str(exc.value)
    assert "\n" not in message and all(f in message for f in fragments), message
    return message


# ---- files -------------------------------------------------------------------------------------

def test_regular_file_is_read(tmp_path):
    (tmp_path / "f.txt").write_text("héllo")
    assert read_bytes(tmp_path / "f.txt", "test file", "json_bytes") == "héllo".encode()
    assert read_text(tmp_path / "f.txt", "test file", "json_bytes") == "héllo"


def test_fifo_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "config.json")
    with within(5), pytest.raises(DfstError) as exc:
        read_json(tmp_path / "config.json", "checkpoint file")
    one_line(exc, "config.json", "is a FIFO (named pipe), not a regular file")


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/null"])
def test_link_to_a_device_is_refused(tmp_path, target):
    (tmp_path / "model.safetensors").symlink_to(target)
    with within(5), pytest.raises(DfstError) as exc:
        read_bytes(tmp_path / "model.safetensors", "checkpoint file", "checkpoint_bytes")
    one_line(exc, "model.safetensors", f"a link to {target}", "is a character device, not a regular file")


def test_directory_and_socket_are_refused(tmp_path):
    import socket

    with pytest.raises(DfstError) as exc:
        read_bytes(tmp_path, "dataset", "dataset_bytes")
    one_line(exc, "is a directory")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tmp_path / "s"))
        with pytest.raises(DfstError) as exc:
            read_bytes(tmp_path / "s", "dataset", "dataset_bytes")
        one_line(exc, "is a socket")
    finally:
        sock.close()


def test_missing_file_and_broken_link(tmp_path):
    with pytest.raises(InputMissing) as exc:
        read_bytes(tmp_path / "nope.json", "agent file", "json_bytes")
    one_line(exc, "agent file", "nope.json does not exist")
    assert read_json_if_exists(tmp_path / "nope.json", "run file") is None
    assert read_json_if_exists(tmp_path / "nope" / "deeper.json", "run file") is None
    (tmp_path / "dangling.json").symlink_to(tmp_path / "gone.json")
    with pytest.raises(DfstError) as exc:  # something exists there: not "missing"
        read_json_if_exists(tmp_path / "dangling.json", "run file")
    assert not isinstance(exc.value, InputMissing)
    one_line(exc, "symbolic link", "gone.json", "does not exist")


def test_unreadable_file(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root reads every file")
    path = tmp_path / "secret.json"
    path.write_text("{}")
    path.chmod(0)
    with pytest.raises(DfstError) as exc:
        read_json(path, "config")
    one_line(exc, "cannot read config", "Permission denied")


def test_over_cap_file_is_refused_and_the_variable_raises_the_cap(tmp_path, monkeypatch):
    path = tmp_path / "big.json"
    path.write_text(json.dumps(["x" * 100] * 30))  # about 3 KiB
    monkeypatch.setenv("DFST_MAX_JSON_BYTES", "1K")
    with pytest.raises(DfstError) as exc:
        read_json(path, "agent file")
    one_line(exc, "agent file", "big.json is 3.", "over the cap of 1.0 KiB", "DFST_MAX_JSON_BYTES")
    monkeypatch.setenv("DFST_MAX_JSON_BYTES", "4K")
    assert len(read_json(path, "agent file")) == 30


def test_a_bad_cap_variable_is_an_error(tmp_path, monkeypatch):
    (tmp_path / "a.json").write_text("{}")
    monkeypatch.setenv("DFST_MAX_JSON_BYTES", "lots")
    with pytest.raises(DfstError, match="DFST_MAX_JSON_BYTES"):
        read_json(tmp_path / "a.json", "agent file")


def test_not_utf8_text(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"12\xff34")
    with pytest.raises(DfstError) as exc:
        read_text(tmp_path / "a.txt", "operand file", "operand_bytes")
    one_line(exc, "a.txt is not UTF-8 text")


# ---- JSON --------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["[" * 100_000, "[" * 100_000 + "]" * 100_000, '{"a":' * 100_000,
                                  "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)])
def test_deep_json_is_refused_without_recursion_error(text):
    with pytest.raises(DfstError) as exc:
        parse_json(text, "agent file deep.json")
    one_line(exc, "agent file deep.json", f"nests deeper than {MAX_JSON_DEPTH} levels")


def test_json_at_the_depth_limit_parses():
    data = parse_json("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH, "x")
    for _ in range(MAX_JSON_DEPTH - 1):
        (data,) = data
    assert data == []


def test_nan_is_refused_unless_asked_for():
    with pytest.raises(DfstError, match="NaN"):
        parse_json('{"loss": NaN}', "run config")
    with pytest.raises(DfstError, match="Infinity"):
        parse_json("[-Infinity]", "run config")
    loss = parse_json('{"loss": NaN}', "metrics line", allow_nan=True)["loss"]
    assert loss != loss


@pytest.mark.parametrize("raw, fragment", [
    (b"\xff{}", "not UTF-8"), (b"{'k': 1}", "not valid JSON"), (b"", "not valid JSON"),
    (b"1" * 5000, "not valid JSON"), (b'"\\ud800"', "lone surrogate"), (b'{"\\udc00": 1}', "lone surrogate"),
    (b"[" + b"{}," * (1 << 21) + b"{}]", "more than 2,097,152 arrays and objects"),
])
def test_bad_json_is_one_line(raw, fragment):
    with pytest.raises(DfstError) as exc:
        parse_json(raw, "x.json")
    one_line(exc, "x.json", fragment)


def test_valid_json_with_escapes_and_pairs():
    assert parse_json(b'{"a": ["\\ud83d\\ude00", "\\\\ud800", 1.5, null]}', "x") == \
        {"a": ["\U0001F600", "\\ud800", 1.5, None]}


# ---- zip ---------------------------------------------------------------------------------------

def write_zip(path: Path, members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", compression=method) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def patch_headers(path: Path, name: str, fmt: str, offset: int, value: int | None = None,
                  xor: int = 0) -> None:
    """Set (or xor) one field in both the local and the central header of member `name`.

    `offset` is the field's offset in the local header; the central header holds the same fields
    2 bytes further (it starts with 'version made by').
    """
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        local, central = zf.getinfo(name).header_offset, zf.start_dir
    while data[central + 46:central + 46 + len(name)] != name.encode():
        central += 46 + sum(struct.unpack_from("<HHH", data, central + 28))  # name, extra, comment
    for at in (local + offset, central + offset + 2):
        (old,) = struct.unpack_from(fmt, data, at)
        struct.pack_into(fmt, data, at, (old ^ xor) if value is None else value)
    path.write_bytes(bytes(data))


FLAGS, CRC, COMPRESSED, SIZE = 6, 14, 18, 22  # offsets of fields in a local file header


def test_members_are_read(tmp_path):
    path = write_zip(tmp_path / "d.zip", {"a.txt": b"alpha", "b.txt": b"beta" * 1000})
    assert read_zip_members(path, ("a.txt", "b.txt", "c.txt"), "dataset") == \
        {"a.txt": b"alpha", "b.txt": b"beta" * 1000}


def test_encrypted_member_is_refused(tmp_path):
    path = write_zip(tmp_path / "d.zip", {"meta.json": b"{}"})
    patch_headers(path, "meta.json", "<H", FLAGS, xor=0x1)
    with pytest.raises(DfstError) as exc:
        read_zip_members(path, ("meta.json",), "dataset")
    one_line(exc, "d.zip", "member meta.json is encrypted")


def test_zip_bomb_is_refused_by_ratio(tmp_path):
    path = write_zip(tmp_path / "bomb.zip", {"reads.npy": bytes(16 * MiB)})
    assert path.stat().st_size < 100_000
    with pytest.raises(DfstError) as exc:
        read_zip_members(path, ("reads.npy",), "dataset")
    one_line(exc, "bomb.zip", "reads.npy inflates", "a zip bomb?")


def test_inflated_cap_counts_every_member(tmp_path, monkeypatch):
    monkeypatch.setenv("DFST_MAX_DATASET_INFLATED", "1M")
    noise = os.urandom(700_000)  # does not compress: the ratio check stays out of the way
    path = write_zip(tmp_path / "d.zip", {"a": noise, "b": noise})
    assert read_zip_members(path, ("a",), "dataset") == {"a": noise}
    with pytest.raises(DfstError) as exc:
        read_zip_members(path, ("a", "b"), "dataset")
    one_line(exc, "member b inflates", "over the cap of 1.0 MiB", "DFST_MAX_DATASET_INFLATED")
    monkeypatch.setenv("DFST_MAX_DATASET_INFLATED", "2M")
    assert len(read_zip_members(path, ("a", "b"), "dataset")) == 2


def test_header_that_understates_the_size_does_not_get_past_the_cap(tmp_path, monkeypatch):
    monkeypatch.setenv("DFST_MAX_DATASET_INFLATED", "1M")
    path = write_zip(tmp_path / "d.zip", {"reads.npy": bytes(4 * MiB)})
    patch_headers(path, "reads.npy", "<I", SIZE, value=1000)  # declares 1000 bytes, inflates 4 MiB
    with pytest.raises(DfstError) as exc:
        read_zip_members(path, ("reads.npy",), "dataset")
    one_line(exc, "d.zip", "corrupted")


def test_header_that_overstates_the_size(tmp_path):
    path = write_zip(tmp_path / "d.zip", {"reads.npy": b"x" * 5000})
    patch_headers(path, "reads.npy", "<I", SIZE, value=50_000)
    with pytest.raises(DfstError) as exc:
        read_zip_members(path, ("reads.npy",), "dataset")
    one_line(exc, "corrupted")


def test_bad_crc(tmp_path):
    path = write_zip(tmp_path / "d.zip", {"meta.json": b'{"format": "x"}'})
    patch_headers(path, "meta.json", "<I", CRC, xor=0xFFFF)
    with pytest.raises(DfstError) as exc:
        read_zip_members(path, ("meta.json",), "dataset")
    one_line(exc, "corrupted", "Bad CRC-32")


@pytest.mark.parametrize("keep", [0.3, 0.6, 0.95])
def test_truncated_zip(tmp_path, keep):
    path = write_zip(tmp_path / "d.zip", {"a": os.urandom(5000), "b": b"b" * 100})
    data = path.read_bytes()
    path.write_bytes(data[:int(len(data) * keep)])
    with pytest.raises(DfstError) as exc:
        read_zip_members(path, ("a", "b"), "dfst PTO dataset")
    one_line(exc, "is not a dfst PTO dataset (not a zip file, or truncated)")


def test_too_many_members(tmp_path):
    path = write_zip(tmp_path / "d.zip", {f"m{i}": b"" for i in range(MAX_ZIP_MEMBERS + 1)})
    with pytest.raises(DfstError) as exc:
        read_zip_members(path, ("m0",), "dataset")
    one_line(exc, f"more than {MAX_ZIP_MEMBERS} members")


def test_unbounded_compression_methods_are_refused(tmp_path):
    path = write_zip(tmp_path / "d.zip", {"a": b"a" * 100}, method=zipfile.ZIP_BZIP2)
    with pytest.raises(DfstError) as exc:
        read_zip_members(path, ("a",), "dataset")
    one_line(exc, "member a uses compression method 12")


def test_stored_members_are_read(tmp_path):
    path = write_zip(tmp_path / "d.zip", {"a": b"plain"}, method=zipfile.ZIP_STORED)
    assert read_zip_members(path, ("a",), "dataset") == {"a": b"plain"}


def test_zip_as_a_fifo_does_not_block(tmp_path):
    os.mkfifo(tmp_path / "d.zip")
    with within(5), pytest.raises(DfstError, match="FIFO"):
        read_zip_members(tmp_path / "d.zip", ("a",), "dataset")


# ---- safetensors -------------------------------------------------------------------------------

def safetensors_file(header: dict, data: bytes = b"") -> bytes:
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


GOOD = {"__metadata__": {"format": "x"}, "A": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}}


def test_valid_safetensors_loads():
    raw = save_safetensors({"A": torch.ones(2, 3), "h0": torch.zeros(4)}, metadata={"k": "v"})
    assert check_safetensors_header(raw, "model")["__metadata__"] == {"k": "v"}
    tensors = load_safetensors_bytes(raw, "model")
    assert torch.equal(tensors["A"], torch.ones(2, 3)) and torch.equal(tensors["h0"], torch.zeros(4))
    check_safetensors_header(safetensors_file(GOOD, bytes(24)), "model")


def edit(entry: dict) -> dict:
    return {**GOOD, "A": {**GOOD["A"], **entry}}


@pytest.mark.parametrize("raw, fragment", [
    (b"", "shorter than the 8-byte header length"),
    (struct.pack("<Q", 1 << 40) + b"{}", "header length 1,099,511,627,776"),
    (struct.pack("<Q", 100) + b"{}", "header length 100 in a 10-byte file"),
    (struct.pack("<Q", MAX_SAFETENSORS_HEADER + 1) + bytes(MAX_SAFETENSORS_HEADER + 1), "at most"),
    (struct.pack("<Q", 5) + b"[1,2]", "not a JSON object"),
    (struct.pack("<Q", 6) + b"\xff\xfe{}  ", "not UTF-8"),
    (safetensors_file({"A": "x"}), "'A' has no known dtype"),
    (safetensors_file(edit({"dtype": "F12"}), bytes(24)), "'A' has no known dtype"),
    (safetensors_file(edit({"shape": [1 << 40, 1 << 40, 1 << 40]}), bytes(24)), "more elements than"),
    (safetensors_file(edit({"shape": [1 << 70]}), bytes(24)), "not a list of sizes"),
    (safetensors_file(edit({"shape": [-1, 3]}), bytes(24)), "not a list of sizes"),
    (safetensors_file(edit({"shape": "2x3"}), bytes(24)), "not a list of sizes"),
    (safetensors_file(edit({"data_offsets": [0, 1 << 40]}), bytes(24)), "within the 24-byte"),
    (safetensors_file(edit({"data_offsets": [24, 0]}), bytes(24)), "not [begin, end]"),
    (safetensors_file(edit({"data_offsets": [0, 12]}), bytes(24)), "does not fill data_offsets"),
    (safetensors_file({**GOOD, "__metadata__": {"n": 1}}, bytes(24)), "not an object of strings"),
    (safetensors_file(GOOD, bytes(23)), "within the 23-byte data"),
])
def test_bad_safetensors_header_is_refused_before_loading(raw, fragment):
    with pytest.raises(DfstError) as exc:
        load_safetensors_bytes(raw, "checkpoint file m/model.safetensors")
    one_line(exc, "checkpoint file m/model.safetensors is damaged or not safetensors", fragment)


def test_library_errors_are_dfst_errors():
    # The header passes our checks; the library refuses a gap between tensors.
    raw = safetensors_file({"A": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, bytes(8))
    with pytest.raises(DfstError) as exc:
        load_safetensors_bytes(raw, "state")
    one_line(exc, "state is damaged or not safetensors")


def test_pickle_is_not_safetensors(tmp_path):
    buf = io.BytesIO()
    torch.save({"A": torch.zeros(2)}, buf)
    with pytest.raises(DfstError, match="damaged or not safetensors"):
        load_safetensors_bytes(buf.getvalue(), "model")


# ---- the readers that go through dfst.io.inputs, and the CLI on top of them ------------------------

def saved_checkpoint(directory: Path) -> Path:
    from dfst.model.checkpoint import save_checkpoint
    from dfst.model.compile import compile_agent
    from dfst.tasks import TASKS

    save_checkpoint(compile_agent(TASKS["add2"].agent), directory, {"source": "test"})
    return directory


def saved_dataset(path: Path) -> Path:
    from dfst.data import record_dataset, save_dataset
    from dfst.tasks import TASKS

    save_dataset(record_dataset(TASKS["add2"], 3, 3, seed=0), path)
    return path


def test_cli_operand_from_dev_zero_is_refused_at_once(capsys):
    from cli_helpers import assert_one_line_error, run

    with within(10):
        code, _, err = run(capsys, "solve", "add2", "@/dev/zero", "1")
    assert_one_line_error(code, err, "operand file /dev/zero is a character device, not a regular file")


def test_cli_operand_over_cap(capsys, tmp_path, monkeypatch):
    from cli_helpers import assert_one_line_error, run

    (tmp_path / "a.txt").write_text("1" * 3000)
    monkeypatch.setenv("DFST_MAX_OPERAND_BYTES", "2K")
    code, _, err = run(capsys, "solve", "add2", f"@{tmp_path / 'a.txt'}", "1")
    assert_one_line_error(code, err, "over the cap of 2.0 KiB", "DFST_MAX_OPERAND_BYTES")


def test_cli_deeply_nested_agent(capsys, tmp_path):
    from cli_helpers import assert_one_line_error, run

    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    code, _, err = run(capsys, "solve", "--agent", tmp_path / "deep.json", "add2", "1", "1")
    assert_one_line_error(code, err, "deep.json nests deeper than 64 levels")


def test_cli_zip_bomb_dataset(capsys, tmp_path):
    from cli_helpers import assert_one_line_error, run

    members = {"meta.json": b"{}", "reads.npy": bytes(64 * MiB)}
    write_zip(tmp_path / "bomb.zip", members)
    code, _, err = run(capsys, "data", "--inspect", tmp_path / "bomb.zip")
    assert_one_line_error(code, err, "bomb.zip", "reads.npy inflates", "a zip bomb?")


def test_dataset_member_with_a_huge_npy_shape(tmp_path):
    from dfst.data import load_dataset

    path = saved_dataset(tmp_path / "d.pto.zip")
    with zipfile.ZipFile(path) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    members["reads.npy"] = members["reads.npy"].replace(b"'shape': (", b"'shape': (99999999999")
    write_zip(tmp_path / "e.pto.zip", members)
    with pytest.raises(DfstError, match="does not fit"):
        load_dataset(tmp_path / "e.pto.zip")


def test_dataset_that_is_a_fifo(tmp_path):
    from dfst.data import load_dataset

    os.mkfifo(tmp_path / "d.pto.zip")
    with within(5), pytest.raises(DfstError, match="FIFO"):
        load_dataset(tmp_path / "d.pto.zip")


def test_cli_eval_of_weights_linked_to_dev_zero(capsys, tmp_path):
    from cli_helpers import assert_one_line_error, run

    directory = saved_checkpoint(tmp_path / "ck")
    (directory / "model.safetensors").unlink()
    (directory / "model.safetensors").symlink_to("/dev/zero")
    with within(20):
        code, _, err = run(capsys, "eval", directory)
    assert_one_line_error(code, err, "model.safetensors (a link to /dev/zero) is a character device")


def test_checkpoint_config_that_is_a_fifo(tmp_path):
    from dfst.model.checkpoint import load_checkpoint

    directory = saved_checkpoint(tmp_path / "ck")
    (directory / "config.json").unlink()
    os.mkfifo(directory / "config.json")
    with within(5), pytest.raises(DfstError, match="config.json is a FIFO"):
        load_checkpoint(directory)


def test_results_with_deep_json(tmp_path):
    from dfst.results import load_results

    (tmp_path / "r.json").write_text('{"system": ' + "[" * 5000 + "]" * 5000 + "}")
    with pytest.raises(DfstError, match="nests deeper"):
        load_results(tmp_path)


def test_metrics_log_skips_torn_and_odd_lines(tmp_path):
    from dfst.train.rundir import read_metrics

    (tmp_path / "m.jsonl").write_bytes(b'{"iteration": 1, "loss": NaN}\n[1]\n' + b"[" * 10_000 + b'\n{"itera')
    (record,) = read_metrics(tmp_path / "m.jsonl")
    assert record["iteration"] == 1 and record["loss"] != record["loss"]


def big_agent(states: int) -> dict:
    """A chain q0 -> q1 -> ... -> halt with two rules per state."""
    rules = [{"state": f"q{i}", "read": s, "next": f"q{i + 1}" if i + 1 < states else "halt", "write": s,
              "move": "R" if i + 1 < states else "S"} for i in range(states) for s in "01"]
    return {"format": "dfst-agent", "version": 1, "name": "big", "states": [f"q{i}" for i in range(states)]
            + ["halt"], "alphabet": ["0", "1", "_"], "blank": "_", "initial": "q0", "final": "halt",
            "rules": rules}


def test_agent_validation_is_linear():
    """10^5 states and 2x10^5 rules: names.count and set(states) per rule made this 77 s."""
    from dfst.automata import transducer_from_dict

    agent = transducer_from_dict(big_agent(100_000))
    assert agent.d == 100_001 and len(agent.rules) == 200_000


def test_agent_error_lists_a_bounded_number_of_problems():
    from dfst.automata import AgentError, transducer_from_dict

    data = big_agent(1000)
    data["states"] = data["states"] * 2  # every state listed twice
    with pytest.raises(AgentError) as exc:
        transducer_from_dict(data)
    assert len(exc.value.problems) == 1001 and str(exc.value).endswith("; and 981 more")
