"""R independent DFSTs trained side by side in one batched tensor program (Adam is elementwise, so the
restarts never interact), then judged: closed-loop exactness of each model and of its extracted
automaton, and the size of that automaton.

    python experiments/restarts.py --task add2 --R 16 --iters 3000 --noise 0.1 --normalize
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import torch
import torch.nn.functional as F

from dfst.data import SAMPLERS
from dfst.errors import DfstError
from dfst.extract import extract
from dfst.grid.rollout import DfstWeights
from dfst.model.compile import compile_agent
from dfst.protocol.config import EvalConfig
from dfst.protocol.evaluate import run_protocol
from dfst.tasks import get_task
from dfst.train.batches import Sequences


def init(R, k, d, seed, kind, scale):
    g = torch.Generator().manual_seed(seed)
    if kind == "jitter":
        A = torch.eye(d).expand(R, k, d, d) + scale * torch.randn(R, k, d, d, generator=g)
    else:
        A = torch.randn(R, k, d, d, generator=g) / d**0.5
    B = scale * torch.randn(R, k, k, d, generator=g)
    C = scale * torch.randn(R, k, 5, d, generator=g)
    h0 = torch.eye(d)[0].expand(R, d).clone()
    return [p.clone().requires_grad_(True) for p in (A, B, C, h0)]


def forward(A, B, C, h0, reads, mask, noise, normalize):
    R, N, T = A.shape[0], reads.shape[0], reads.shape[1]
    h = h0[:, None, :].expand(R, N, h0.shape[-1])
    sym, mov, hs = [], [], []
    for t in range(T):
        if normalize:
            h = h / h.norm(dim=-1, keepdim=True).clamp_min(1e-30)
        if noise is not None:
            scale = h.norm(dim=-1, keepdim=True) if not normalize else 1.0
            h = h + noise[:, :, t] * scale
        x = reads[:, t]
        hs.append(h)
        sym.append(torch.einsum("rnij,rnj->rni", B[:, x], h))
        mov.append(torch.einsum("rnij,rnj->rni", C[:, x], h))
        h_next = torch.einsum("rnij,rnj->rni", A[:, x], h)
        h = torch.where(mask[None, :, t, None], h_next, h)
    return torch.stack(sym, 2), torch.stack(mov, 2), torch.stack(hs, 2)


def loss_per_restart(sym, mov, writes, moves, mask, kind):
    if kind == "mse":
        err = ((sym - F.one_hot(writes, sym.shape[-1])) ** 2).sum(-1) + \
              ((mov - F.one_hot(moves, 5)) ** 2).sum(-1)
    else:
        R = sym.shape[0]
        err = F.cross_entropy(sym.reshape(-1, sym.shape[-1]), writes.expand(R, -1, -1).reshape(-1),
                              reduction="none").view(writes.expand(R, -1, -1).shape) + \
              F.cross_entropy(mov.reshape(-1, 5), moves.expand(R, -1, -1).reshape(-1),
                              reduction="none").view(writes.expand(R, -1, -1).shape)
    return torch.where(mask, err, 0.0).sum((1, 2)) / (2 * mask.sum())


def judge(task, data, weights, digits):
    out = {}
    rep, _ = run_protocol(task, DfstWeights.of(*weights), EvalConfig(digits, random=10, rescale=True))
    out["dfst"] = [lv["exact"] for lv in rep["levels"]]
    try:
        found = extract(weights, data, agent=task.agent)
    except DfstError:
        out["states"] = None
        return out
    out["states"], out["rules"] = found.agent.d, found.pairs
    rep, _ = run_protocol(task, DfstWeights.of(*compile_agent(found.agent).numpy_weights()),
                          EvalConfig(digits, random=10, rescale=True))
    out["extracted"] = [lv["exact"] for lv in rep["levels"]]
    out["n"] = rep["levels"][0]["instances"]
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--task", default="add2")
    p.add_argument("--samples", type=int, default=20)
    p.add_argument("--max-digits", type=int, default=3)
    p.add_argument("--data-seed", type=int, default=0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--R", type=int, default=8)
    p.add_argument("--d", type=int, default=0)
    p.add_argument("--iters", type=int, default=3000)
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--noise", type=float, default=0.0)
    p.add_argument("--noise-final", type=float, default=None)
    p.add_argument("--l1", type=float, default=0.0)
    p.add_argument("--normalize", action="store_true")
    p.add_argument("--init", default="jitter")
    p.add_argument("--init-scale", type=float, default=0.01)
    p.add_argument("--loss", default="mse")
    p.add_argument("--digits", default="10,100,1000")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    task = get_task(args.task)
    data = SAMPLERS["cover"](task, args.samples, args.max_digits, args.data_seed)
    seqs = Sequences.of(data)
    reads, writes, moves, mask = seqs.batch(None)
    k, d = len(task.alphabet), args.d or task.agent.d
    params = init(args.R, k, d, args.seed, args.init, args.init_scale)
    opt = torch.optim.Adam(params, lr=args.lr)
    g = torch.Generator().manual_seed(args.seed + 1)
    start = time.process_time()
    for it in range(args.iters):
        lr = args.lr * 0.5 * (1 + math.cos(math.pi * it / args.iters))
        for group in opt.param_groups:
            group["lr"] = lr
        sigma = args.noise if args.noise_final is None else \
            args.noise + (args.noise_final - args.noise) * it / max(args.iters - 1, 1)
        noise = sigma * torch.randn(args.R, *reads.shape, d, generator=g) if sigma > 0 else None
        sym, mov, _ = forward(*params, reads, mask, noise, args.normalize)
        per = loss_per_restart(sym, mov, writes, moves, mask, args.loss)
        total = per.sum() + args.l1 * params[0].abs().sum()
        opt.zero_grad()
        total.backward()
        opt.step()
        if it % max(1, args.iters // 5) == 0 or it == args.iters - 1:
            print(f"it {it} loss min {per.min().item():.2e} median {per.median().item():.2e} "
                  f"cpu {time.process_time() - start:.1f}s", flush=True)
    with torch.no_grad():
        sym, mov, _ = forward(*params, reads, mask, None, args.normalize)
        clean = loss_per_restart(sym, mov, writes, moves, mask, args.loss)
    digits = tuple(int(x) for x in args.digits.split(","))
    print(f"train cpu {time.process_time() - start:.1f}s; judging at {digits}")
    for r in range(args.R):
        w = tuple(t[r].detach().numpy().astype(np.float32) for t in params)
        res = judge(task, data, w, digits)
        print(f"r{r:02d} clean loss {clean[r].item():.2e} {res}", flush=True)


if __name__ == "__main__":
    main()
