"""Turing-Program transformer (Hou et al. 2024, seed 001): a decoder-only transformer with Hard-ALiBi
attention, trained on Turing-Program scratchpads, decoded with a sliding window. `PROGRAMS` lists the
tasks: add10 (`tp_scratchpad`) and mult10x1, n x 1 multiplication (`tp_mult_scratchpad`).

Hard-ALiBi (Jelassi et al. 2024): head h adds the bias -inf to keys at distance >= m_h and 0 to the
others, so a masked head sees only its last m_h tokens (itself included); the paper uses M masked
heads with m = 1..M and the remaining heads unrestricted (causal softmax with no positional encoding).
There is no other positional information. Training packs i.i.d. programs into a stream and cuts
windows of `context` tokens at random offsets, so most windows start mid-program, which is what the
model meets when the decoding window slides over a long program; the lines of a cut window whose
predecessor is cut off are not targets (`first_predictable`). The length curriculum raises the
largest operand length linearly from `min_train_digits` to `max_train_digits` over the first
`curriculum` fraction of the steps. Decoding keeps a key/value cache of the last `window` tokens
(default `context`): there is no absolute position, so dropping old cache entries is the sliding
window itself, advanced one token at a time (the paper re-encodes the window every 20 tokens).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from dfst.baselines import tp_mult_scratchpad as tpm
from dfst.baselines import tp_scratchpad as tp
from dfst.baselines.common import IO_EVAL_SECONDS, evaluate_predictor, hardware, power_growth
from dfst.errors import DfstError
from dfst.results import Result
from dfst.tasks import get_task
from dfst.tasks.base import Instance, Task

DEFAULTS: dict = {
    "n_layer": 4, "d_model": 96, "n_head": 6, "masked_heads": 3, "d_ff": 384,
    "context": 192, "batch": 16, "steps": 5000, "lr": 3e-3, "weight_decay": 0.1, "warmup": 200,
    "min_train_digits": 2, "max_train_digits": 8, "curriculum": 0.3,
    "window": 0, "eval_factors": "1,1.5,2,3,5", "eval_random": 10, "threads": 1,
    "eval_seconds": IO_EVAL_SECONDS,
    "paper_size": False,
}
COST_POWER = 2  # an instance of n digits: a scratchpad of ~n lines of ~n tokens
# The paper's addition run (section 3.1.1): GPT-NeoX-like, 150M parameters; needs a GPU.
PAPER_SIZE: dict = {
    "n_layer": 12, "d_model": 1024, "n_head": 16, "masked_heads": 6, "d_ff": 4096,
    "context": 500, "batch": 16, "steps": 200_000, "lr": 7e-5, "warmup": 100,
    "min_train_digits": 2, "max_train_digits": 50, "curriculum": 0.0, "eval_factors": "1,1.5,2",
}


@dataclass(frozen=True)
class ProgramTask:
    """A task written as Turing Programs: the dfst task it is scored on and how its programs read."""

    task: Task
    program: Callable[[str, str], str]   # (a, b) -> prompt + steps + answer + EOS
    prompt: Callable[[str, str], str]
    b_digits: int = 0                    # fixed length of b in training (0: sampled like a)

    def sample_operands(self, rng: np.random.Generator, max_digits: int) -> tuple[str, str]:
        a = tp.random_operand(rng, int(rng.integers(1, max_digits + 1)))
        b_len = self.b_digits or int(rng.integers(1, max_digits + 1))
        return a, tp.random_operand(rng, b_len)

    def cap(self, instance: Instance) -> int:
        """Tokens after the prompt a correct program never exceeds, plus slack; decoding stops there."""
        return tp.token_cap(len(instance.a), len(instance.b), self.program, self.prompt) + 8


PROGRAMS: dict[str, ProgramTask] = {
    "add10": ProgramTask(get_task("add10"), tp.addition_program, tp.prompt_text),
    "mult10x1": ProgramTask(tpm.MULT10X1, tpm.multiplication_program, tpm.prompt_text, b_digits=1),
}
# Tasks this baseline adds to dfst's registry, so that `dfst baseline tp-transformer mult10x1` finds them.
EXTRA_TASKS: dict[str, Task] = {"mult10x1": tpm.MULT10X1}


@dataclass(frozen=True)
class TPConfig:
    vocab: int = len(tp.VOCAB)
    n_layer: int = 4
    d_model: int = 128
    n_head: int = 8
    masked_heads: int = 4   # heads 0..M-1 see the last 1..M tokens; the rest are unrestricted
    d_ff: int = 512

    def reach(self) -> torch.Tensor:
        """Per head, how many most recent tokens it may see (inf: unrestricted)."""
        m = [float(i + 1) if i < self.masked_heads else math.inf for i in range(self.n_head)]
        return torch.tensor(m)


def attention_mask(q_pos: torch.Tensor, k_pos: torch.Tensor, reach: torch.Tensor,
                   key_valid: torch.Tensor, window: float = math.inf) -> torch.Tensor:
    """Boolean (B, H, Tq, Tk): causal, within each head's reach and the window, on valid keys."""
    dist = (q_pos[:, None] - k_pos[None, :]).float()                      # (Tq, Tk)
    seen = (dist >= 0) & (dist < reach[:, None, None]) & (dist < window)  # (H, Tq, Tk)
    allowed = seen[None] & key_valid[:, None, None, :]                    # (B, H, Tq, Tk)
    return allowed | (dist == 0)  # a token always sees itself, so padded rows stay finite


class Block(nn.Module):
    """Pre-norm attention + MLP; attention returns its keys and values for the decoding cache."""

    def __init__(self, cfg: TPConfig):
        super().__init__()
        self.n_head, self.d = cfg.n_head, cfg.d_model
        self.ln1, self.ln2 = nn.LayerNorm(cfg.d_model), nn.LayerNorm(cfg.d_model)
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)
        self.mlp = nn.Sequential(nn.Linear(cfg.d_model, cfg.d_ff), nn.GELU(),
                                 nn.Linear(cfg.d_ff, cfg.d_model))

    def forward(self, x, mask, past=None):
        b, t, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(self.d, dim=2)
        q, k, v = (z.view(b, t, self.n_head, -1).transpose(1, 2) for z in (q, k, v))  # (B, H, T, hd)
        if past is not None:
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)       # (B, H, T, hd)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, self.d))
        return x + self.mlp(self.ln2(x)), (k, v)


class TPTransformer(nn.Module):
    def __init__(self, cfg: TPConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab, bias=False)
        self.register_buffer("reach", cfg.reach(), persistent=False)

    def forward(self, tokens: torch.Tensor, key_valid: torch.Tensor | None = None,
                window: float = math.inf, past=None, positions: torch.Tensor | None = None):
        """Logits (B, T, V) and the per-layer (k, v). `past` = (k_pos, key_valid, [(k, v)]) cache."""
        b, t = tokens.shape
        q_pos = torch.arange(t) if positions is None else positions
        valid = torch.ones(b, t, dtype=torch.bool) if key_valid is None else key_valid
        k_pos, layers = q_pos, [None] * len(self.blocks)
        if past is not None:
            k_pos, valid, layers = torch.cat([past[0], q_pos]), torch.cat([past[1], valid], 1), past[2]
        mask = attention_mask(q_pos, k_pos, self.reach, valid, window)
        x, cache = self.embed(tokens), []                                    # (B, T, D)
        for block, layer_past in zip(self.blocks, layers):
            x, kv = block(x, mask, layer_past)
            cache.append(kv)
        return self.head(self.ln_f(x)), (k_pos, valid, cache)


def trim_cache(cache, keep: int):
    """The last `keep` entries of a decoding cache: the sliding window."""
    k_pos, valid, layers = cache
    return k_pos[-keep:], valid[:, -keep:], [(k[:, :, -keep:], v[:, :, -keep:]) for k, v in layers]


@torch.no_grad()
def generate(model: TPTransformer, prompts: list[list[int]], caps: list[int], window: int) -> list[list[int]]:
    """Greedy continuations of `prompts` (batched, left-padded), each stopping at EOS or its cap."""
    width = max(len(p) for p in prompts)
    tokens = torch.tensor([[tp.PAD_ID] * (width - len(p)) + p for p in prompts])
    logits, cache = model(tokens, tokens != tp.PAD_ID, window=window)
    nxt, out = logits[:, -1].argmax(-1), [[] for _ in prompts]
    done = torch.zeros(len(prompts), dtype=torch.bool)
    for step in range(max(caps)):
        for i in torch.nonzero(~done).flatten().tolist():
            out[i].append(int(nxt[i]))
            done[i] = nxt[i] == tp.EOS_ID or len(out[i]) >= caps[i]
        if done.all():
            break
        cache = trim_cache(cache, window - 1)
        logits, cache = model(nxt[:, None], None, window=window, past=cache,
                              positions=torch.tensor([width + step]))
        nxt = logits[:, -1].argmax(-1)
    return out


def make_predictor(model: TPTransformer, window: int, spec: ProgramTask):
    """A `common.Predictor`: prompt each instance, decode, read the answer line."""
    def predict(instances: list[Instance]) -> list[str | None]:
        prompts = [tp.encode(spec.prompt(x.a, x.b)) for x in instances]
        caps = [spec.cap(x) for x in instances]
        return [tp.parse_answer(tp.decode(g)) for g in generate(model, prompts, caps, window)]
    return predict


def curriculum_digits(step: int, cfg: dict) -> int:
    """Largest operand length at `step`: linear from min to max over the curriculum fraction."""
    span = cfg["curriculum"] * cfg["steps"]
    frac = 1.0 if span <= 0 else min(1.0, step / span)
    lo, hi = cfg["min_train_digits"], cfg["max_train_digits"]
    return int(round(lo + frac * (hi - lo)))


def sample_batch(rng: np.random.Generator, cfg: dict, max_digits: int, seen: set, spec: ProgramTask):
    """(inputs, targets, mask) of shape (batch, context): random windows of a packed program stream."""
    rows, masks = [], []
    for _ in range(cfg["batch"]):
        text, mask = "", []
        while len(text) < 2 * cfg["context"] + 1:
            a, b = spec.sample_operands(rng, max_digits)
            seen.add((a, b))
            program = spec.program(a, b)
            text, mask = text + program, mask + tp.loss_mask(program)
        start = int(rng.integers(0, len(text) - cfg["context"]))
        window = text[start:start + cfg["context"] + 1]
        first = first_predictable(window)
        rows.append(tp.encode(window))
        masks.append([m and i >= first for i, m in enumerate(mask[start:start + len(window)])][1:])
    ids = torch.tensor(rows)
    return ids[:, :-1], ids[:, 1:], torch.tensor(masks)


def first_predictable(window: str) -> int:
    """Index of the first token of `window` whose line above lies whole inside it.

    A window cut mid-program opens with a line whose predecessor is cut and a line copied partly
    from that cut line: their tokens cannot be predicted, so they are not targets. A new program
    (BOS) is predictable from its start; its prompt is masked by `loss_mask`.
    """
    first_line_end = window.find(tp.LINE)
    second_line_end = window.find(tp.LINE, first_line_end + 1) if first_line_end >= 0 else -1
    after_lines = second_line_end + 1 if second_line_end >= 0 else len(window)
    bos = window.find(tp.BOS)
    return min(after_lines, bos if bos >= 0 else len(window))


def lr_at(step: int, cfg: dict) -> float:
    """Linear warm-up, then linear decay to 0 (the paper's schedule)."""
    if step < cfg["warmup"]:
        return cfg["lr"] * (step + 1) / cfg["warmup"]
    return cfg["lr"] * max(0.0, 1 - (step - cfg["warmup"]) / max(1, cfg["steps"] - cfg["warmup"]))


def loss_on(model: TPTransformer, inputs, targets, mask) -> torch.Tensor:
    logits, _ = model(inputs)                                               # (B, T, V)
    losses = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")
    return (losses * mask).sum() / mask.sum().clamp(min=1)


def train(model: TPTransformer, cfg: dict, spec: ProgramTask, seed: int, progress: bool = True) -> dict:
    """One visible loop: batch, forward, loss, backward, step. Returns samples and the loss curve."""
    rng, seen, curve = np.random.default_rng(seed), set(), []
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=cfg["weight_decay"])
    with _progress(progress) as bar:
        job = bar.add_task("train", total=cfg["steps"], loss=float("nan"))
        for step in range(cfg["steps"]):
            batch = sample_batch(rng, cfg, curriculum_digits(step, cfg), seen, spec)
            for group in opt.param_groups:
                group["lr"] = lr_at(step, cfg)
            loss = loss_on(model, *batch)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            curve.append(loss.item())
            bar.update(job, advance=1, loss=curve[-1])
    return {"samples": len(seen), "loss_curve": curve, "trained_on": seen}


def _progress(enabled: bool) -> Progress:
    return Progress(TextColumn("tp-transformer {task.completed}/{task.total}"), BarColumn(),
                    MofNCompleteColumn(), TextColumn("loss {task.fields[loss]:.4f}"), TimeElapsedColumn(),
                    disable=not enabled)


def resolve_config(config: dict) -> dict:
    """DEFAULTS, then the paper's sizes if `paper_size`, then the user's overrides; checked."""
    unknown = sorted(set(config) - set(DEFAULTS))
    if unknown:
        raise DfstError(f"unknown tp-transformer config key(s): {', '.join(unknown)}")
    cfg = dict(DEFAULTS)
    if config.get("paper_size", False):
        cfg.update(PAPER_SIZE)
    cfg.update(config)
    if not 0 <= cfg["masked_heads"] <= cfg["n_head"] or cfg["d_model"] % cfg["n_head"]:
        raise DfstError("tp-transformer needs 0 <= masked_heads <= n_head and n_head dividing d_model")
    if not 1 <= cfg["min_train_digits"] <= cfg["max_train_digits"]:
        raise DfstError("tp-transformer needs 1 <= min_train_digits <= max_train_digits")
    return cfg


def model_config(cfg: dict) -> TPConfig:
    return TPConfig(**{k: int(cfg[k]) for k in ("n_layer", "d_model", "n_head", "masked_heads", "d_ff")})


def eval_digits(cfg: dict) -> list[int]:
    """The evaluation ladder: multiples of the max training length."""
    try:
        factors = [float(f) for f in str(cfg["eval_factors"]).split(",")]
    except ValueError:
        raise DfstError(f"eval_factors must be comma-separated numbers: {cfg['eval_factors']!r}") from None
    return sorted({max(1, round(f * cfg["max_train_digits"])) for f in factors})


def run(task: Task, *, seed: int, config: dict, progress: bool = True) -> Result:
    """Train on the task's Turing Programs, evaluate on the protocol's instances, return the record."""
    if task.name not in PROGRAMS:
        raise DfstError(f"tp-transformer has Turing Programs for {', '.join(PROGRAMS)} only, not {task.name}")
    spec = PROGRAMS[task.name]
    cfg = resolve_config(config)
    torch.manual_seed(seed)
    torch.set_num_threads(int(cfg["threads"]))
    model = TPTransformer(model_config(cfg))
    start = time.process_time()
    trained = train(model, cfg, spec, seed, progress)
    train_seconds = time.process_time() - start
    model.eval()
    window = int(cfg["window"]) or int(cfg["context"])
    scores = evaluate_predictor(spec.task, make_predictor(model, window, spec), eval_digits(cfg),
                                random=int(cfg["eval_random"]), seed=seed, trained_on=trained["trained_on"],
                                time_budget=float(cfg["eval_seconds"]), growth=power_growth(COST_POWER))
    curve = trained["loss_curve"]
    return Result(
        system="tp-transformer", task=task.name, seed=seed, samples=trained["samples"],
        params=sum(p.numel() for p in model.parameters()), max_train_digits=int(cfg["max_train_digits"]),
        robust_lg=scores["robust_lg"], probabilistic_lg=scores["probabilistic_lg"],
        train_seconds=round(train_seconds, 2), hardware=hardware(), levels=scores["levels"], config=cfg,
        notes=(f"final training loss {curve[-1]:.4g} (mean of last 50: {np.mean(curve[-50:]):.4g}); "
               f"decoding window {window} tokens"),
        details={"protocol": scores["protocol"], "stopped_by": scores["stopped_by"]})
