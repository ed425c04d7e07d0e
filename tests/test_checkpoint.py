"""Checkpoints: exact round trips, every kind of damage refused in one line, no pickle anywhere."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
import torch
from safetensors.torch import save as save_safetensors

from dfst.errors import DfstError
from dfst.model import DFST, DFSTConfig, weight_shapes
from dfst.model.checkpoint import CONFIG_FILE, WEIGHTS_FILE, load_checkpoint, save_checkpoint
from dfst.model.compile import compile_agent
from dfst.tasks import TASKS

PROVENANCE = {"source": "compile", "agent": "add2"}


@pytest.fixture(scope="module")
def model() -> DFST:
    return compile_agent(TASKS["add2"].agent)


@pytest.fixture
def saved(tmp_path, model) -> Path:
    return save_checkpoint(model, tmp_path / "ckpt", PROVENANCE)


def weights(model: DFST) -> dict[str, torch.Tensor]:
    return {name: p.detach().clone() for name, p in model.named_parameters()}


def random_model(seed: int) -> DFST:
    g = torch.Generator().manual_seed(seed)
    return DFST.from_weights(*(torch.randn(s, generator=g) for s in weight_shapes(4, 6).values()))


def test_round_trip_is_exact(saved, model):
    loaded, config = load_checkpoint(saved, expect_task="add2")
    assert all(torch.equal(a, b) for a, b in zip(weights(loaded).values(), weights(model).values()))
    assert loaded.config == model.config == DFSTConfig(3, 9, "add2")
    assert config["provenance"] == PROVENANCE
    assert (config["format"], config["version"], config["params"]) == ("dfst-checkpoint", 1, 468)


def test_round_trip_of_dense_weights_and_bytes_are_reproducible(tmp_path):
    first = save_checkpoint(random_model(0), tmp_path / "a", {"seed": 0})
    second = save_checkpoint(random_model(0), tmp_path / "b", {"seed": 0})
    loaded, config = load_checkpoint(first)
    assert all(torch.equal(a, b) for a, b in zip(weights(loaded).values(), weights(random_model(0)).values()))
    assert config["task"] is None
    for name in (WEIGHTS_FILE, CONFIG_FILE):
        assert (first / name).read_bytes() == (second / name).read_bytes()


def test_wrong_task_is_refused(saved):
    with pytest.raises(DfstError, match="is for task add2, not mult2"):
        load_checkpoint(saved, expect_task="mult2")


def test_existing_checkpoint_is_not_overwritten_unless_asked(saved, model):
    other = random_model(1)
    with pytest.raises(DfstError, match="already holds a dfst checkpoint"):
        save_checkpoint(other, saved, {})
    assert torch.equal(load_checkpoint(saved)[0].A, model.A)
    save_checkpoint(other, saved, {"source": "test"}, overwrite=True)
    loaded, config = load_checkpoint(saved)
    assert torch.equal(loaded.A, other.A) and config["provenance"] == {"source": "test"}


def test_saving_into_a_file_or_with_bad_provenance_is_refused(tmp_path, model):
    (tmp_path / "file").write_text("x")
    with pytest.raises(DfstError, match="not a directory"):
        save_checkpoint(model, tmp_path / "file", {})
    with pytest.raises(DfstError, match="provenance"):
        save_checkpoint(model, tmp_path / "new", {"when": object()})
    assert not (tmp_path / "new").exists()  # checked before anything is written


def write_tensors(directory: Path, tensors: dict[str, torch.Tensor]) -> None:
    (directory / WEIGHTS_FILE).write_bytes(save_safetensors(tensors))


def edit_tensors(directory: Path, edit) -> None:
    """Rewrite the weights file with `edit` applied to a dict of the saved tensors."""
    tensors = weights(load_checkpoint(directory)[0])
    edit(tensors)
    write_tensors(directory, tensors)


def edit_config(directory: Path, edit) -> None:
    config = json.loads((directory / CONFIG_FILE).read_text())
    edit(config)
    (directory / CONFIG_FILE).write_text(json.dumps(config))


def truncate(directory: Path, keep: float) -> None:
    raw = (directory / WEIGHTS_FILE).read_bytes()
    (directory / WEIGHTS_FILE).write_bytes(raw[: int(len(raw) * keep)])


DAMAGE = {
    "truncated_tail": (lambda d: truncate(d, 0.9), "damaged or not safetensors"),
    "truncated_header": (lambda d: truncate(d, 0.02), "damaged or not safetensors"),
    "empty_weights": (lambda d: truncate(d, 0.0), "damaged or not safetensors"),
    "garbage_bytes": (lambda d: (d / WEIGHTS_FILE).write_bytes(b"\x13\x37garbage" * 50),
                      "damaged or not safetensors"),
    "trailing_bytes": (lambda d: (d / WEIGHTS_FILE).write_bytes((d / WEIGHTS_FILE).read_bytes() + b"xx"),
                       "damaged or not safetensors"),
    "nan_in_A": (lambda d: edit_tensors(d, lambda t: t["A"].view(-1).__setitem__(5, float("nan"))),
                 "tensor A has NaN"),
    "inf_in_h0": (lambda d: edit_tensors(d, lambda t: t["h0"].__setitem__(0, float("inf"))),
                  "tensor h0 has NaN"),
    "shape_mismatch": (lambda d: write_tensors(d, weights(compile_agent(TASKS["mult2"].agent))),
                       "tensor A has shape"),
    "float64": (lambda d: edit_tensors(d, lambda t: t.__setitem__("B", t["B"].double())),
                "tensor B is torch.float64"),
    "float16": (lambda d: edit_tensors(d, lambda t: t.__setitem__("C", t["C"].half())),
                "tensor C is torch.float16"),
    "extra_tensor": (lambda d: edit_tensors(d, lambda t: t.__setitem__("D", torch.zeros(2))),
                     r"exactly tensors A, B, C, h0 \(found: A, B, C, D, h0\)"),
    "missing_tensor": (lambda d: edit_tensors(d, lambda t: t.pop("h0")), "found: A, B, C\\)"),
    "missing_weights": (lambda d: (d / WEIGHTS_FILE).unlink(), "model.safetensors is missing"),
    "missing_config": (lambda d: (d / CONFIG_FILE).unlink(), "config.json is missing"),
    "config_not_json": (lambda d: (d / CONFIG_FILE).write_text("{'k': 3,"), "not valid JSON"),
    "config_not_utf8": (lambda d: (d / CONFIG_FILE).write_bytes(b"\xff\xfe\x00"), "not valid JSON"),
    "config_list": (lambda d: (d / CONFIG_FILE).write_text("[1, 2]"), "not a dfst-checkpoint"),
    "wrong_format": (lambda d: edit_config(d, lambda c: c.update(format="dfst-agent")),
                     "not a dfst-checkpoint version 1"),
    "wrong_version": (lambda d: edit_config(d, lambda c: c.update(version=2)), "version 1"),
    "missing_k": (lambda d: edit_config(d, lambda c: c.pop("k")), "lacks k"),
    "k_not_int": (lambda d: edit_config(d, lambda c: c.update(k="3")), "positive integer"),
    "d_zero": (lambda d: edit_config(d, lambda c: c.update(d=0)), "positive integer"),
    "d_mismatch": (lambda d: edit_config(d, lambda c: c.update(d=10, params=None)), "params None"),
    "config_sizes_lie": (lambda d: edit_config(d, lambda c: c.update(d=10, params=3 * 10 * 18 + 10)),
                         "tensor A has shape"),
    "task_not_string": (lambda d: edit_config(d, lambda c: c.update(task=3)), "task must be a string"),
    "provenance_not_dict": (lambda d: edit_config(d, lambda c: c.update(provenance="x")),
                            "provenance must be"),
}


def from_elsewhere(directory: Path) -> Path:
    """The checkpoint as one made by hand or by an older dfst: no manifest, a config that names none."""
    (directory / "manifest.json").unlink()
    edit_config(directory, lambda c: c.pop("manifest"))
    return directory


@pytest.mark.parametrize("recorded", [False, True])
@pytest.mark.parametrize("damage", list(DAMAGE))
def test_damaged_checkpoint_is_refused_in_one_line(saved, damage, recorded):
    """From elsewhere, the parser names what is wrong; with dfst's manifest, the file named is not
    what dfst wrote, whatever the damage (even a parsable one)."""
    apply, message = DAMAGE[damage]
    apply(saved if recorded else from_elsewhere(saved))
    expected = "(changed|gone) since dfst wrote it" if recorded else message
    with pytest.raises(DfstError, match=expected) as info:
        load_checkpoint(saved)
    assert "\n" not in str(info.value)


def test_missing_directory_and_file_path_are_refused(tmp_path):
    with pytest.raises(DfstError, match="does not exist"):
        load_checkpoint(tmp_path / "nowhere")
    (tmp_path / "file").write_text("x")
    with pytest.raises(DfstError, match="is not a directory"):
        load_checkpoint(tmp_path / "file")


class Payload:
    """Unpickling this creates `marker`: proof that code ran."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def test_pickled_weights_are_refused_without_running_them(saved, tmp_path):
    marker = tmp_path / "code_ran"
    from_elsewhere(saved)  # (with its manifest, the changed file is refused before it is parsed)
    torch.save({"A": torch.zeros(3, 9, 9), "payload": Payload(marker)}, saved / WEIGHTS_FILE)
    with pytest.raises(DfstError, match="damaged or not safetensors"):
        load_checkpoint(saved)
    assert not marker.exists()
    # The payload is live: unpickling it does run code. (Under a .safetensors name torch.load itself
    # hands the file to safetensors, so load a copy with another name.)
    (tmp_path / "payload.pt").write_bytes((saved / WEIGHTS_FILE).read_bytes())
    torch.load(tmp_path / "payload.pt", weights_only=False)
    assert marker.exists()


def test_loading_never_unpickles(saved, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("pickle used")

    for module, name in ((pickle, "load"), (pickle, "loads"), (pickle, "Unpickler"), (torch, "load")):
        monkeypatch.setattr(module, name, refuse)
    loaded, _ = load_checkpoint(saved)
    assert loaded.config.k == 3
