"""Exploratory (not part of the package): a column-stochastic relaxation of the DFST.

A[x], B[x], C[x] are column-wise softmaxes of free logits and h0 a softmax, so h stays a probability
vector over d states; the loss is the negative log-likelihood of the expert's actions. After
training, every column is snapped to its argmax, which turns the model into an exact one-hot DFST,
evaluated closed-loop on hard + random instances at 5, 20 and 100 digits. R restarts train in one
batch. Optional pressure: --lu (entropy of the state-usage marginal: fewer states), --lh (entropy
of each h_t: sharper states), --tau0/--tau1 (softmax temperature annealing).

    python experiments/relaxed_automaton.py add2 --d 9 --R 32 --iters 3000 --tau0 4 --tau1 0.5 \
        --init 0.5 --lr 0.05
    python experiments/relaxed_automaton.py add2 --d 18 --R 16 --lu 0.3 --lh 0.1 --iters 3000

Results are in docs/research/training.md.
"""
import argparse
import sys
import time

import numpy as np
import torch

from dfst.data.coverage import cover_instances
from dfst.grid.rollout import DfstWeights, rollout, run_table
from dfst.tasks import TASKS

p = argparse.ArgumentParser()
p.add_argument("task"); p.add_argument("--seed", type=int, default=0); p.add_argument("--samples", type=int, default=20)
p.add_argument("--maxd", type=int, default=3); p.add_argument("--d", type=int, default=0); p.add_argument("--iters", type=int, default=3000)
p.add_argument("--R", type=int, default=16); p.add_argument("--lr", type=float, default=0.1)
p.add_argument("--lu", type=float, default=0.0); p.add_argument("--lh", type=float, default=0.0); p.add_argument("--init", type=float, default=1.0)
p.add_argument("--every", type=int, default=1000); p.add_argument("--tau0", type=float, default=1.0); p.add_argument("--tau1", type=float, default=1.0)
a = p.parse_args()
torch.set_num_threads(1)
task = TASKS[a.task]; d = a.d or task.agent.d; k = task.agent.k; R = a.R
insts = cover_instances(task, a.samples, a.maxd, a.seed)
traces = [run_table(task.agent, task.layout(i), task.max_steps(i), record=True).trace for i in insts]
N = len(traces); T = max(len(t) for t in traces)
X = torch.zeros(N, T, dtype=torch.long); S = torch.zeros(N, T, dtype=torch.long); M = torch.zeros(N, T, dtype=torch.long); mask = torch.zeros(N, T)
for i in range(N):
    tr = torch.from_numpy(traces[i].astype(np.int64)); n = len(tr)
    X[i,:n], S[i,:n], M[i,:n], mask[i,:n] = tr[:,0], tr[:,1], tr[:,2], 1
g = torch.Generator().manual_seed(a.seed)
LA = torch.nn.Parameter(torch.randn(R, k, d, d, generator=g) * a.init)
LB = torch.nn.Parameter(torch.randn(R, k, k, d, generator=g) * a.init)
LC = torch.nn.Parameter(torch.randn(R, k, 5, d, generator=g) * a.init)
L0 = torch.nn.Parameter(torch.randn(R, d, generator=g) * a.init)
opt = torch.optim.Adam([LA, LB, LC, L0], lr=a.lr)
TAU = [1.0]
def weights():
    t = TAU[0]
    return torch.softmax(LA / t, 2), torch.softmax(LB / t, 2), torch.softmax(LC / t, 2), torch.softmax(L0 / t, 1)
def loss_fn(lu, lh):
    A, B, C, h0 = weights()
    h = h0[:, None, :].expand(R, N, d); tot = 0; usage = 0; hent = 0
    for t in range(T):
        x = X[:, t]; mt = mask[None, :, t]
        s = torch.einsum("rbij,rbj->rbi", B[:, x], h); m = torch.einsum("rbij,rbj->rbi", C[:, x], h)
        nll = -(torch.log(s.gather(2, S[None, :, t:t+1].expand(R, N, 1)).squeeze(2) + 1e-9) + torch.log(m.gather(2, M[None, :, t:t+1].expand(R,N,1)).squeeze(2) + 1e-9))
        tot = tot + (nll * mt).sum(1)
        usage = usage + (h * mt[..., None]).sum(1)
        hent = hent + (-(h * torch.log(h + 1e-9)).sum(2) * mt).sum(1)
        h = torch.einsum("rbij,rbj->rbi", A[:, x], h)
    nll = tot / mask.sum()
    u = usage / mask.sum()
    uent = -(u * torch.log(u + 1e-9)).sum(1)
    return nll, nll + lu * uent + lh * hent / mask.sum()
def snapped(r):
    A, B, C, h0 = [w[r].detach().numpy() for w in weights()]
    oh = lambda W, ax: (W == W.max(axis=ax, keepdims=True)).astype(np.float32)
    return DfstWeights.of(oh(A,1), oh(B,1), oh(C,1), oh(h0,0))
def gen(w):
    res = {}
    for n in (5, 20, 100):
        r = rollout(task, task.hard_instances(n) + task.random_instances(n, 10, seed=99 + n), weights=w)
        res[n] = round(sum(x.exact for x in r) / len(r), 2)
    return res
t0 = time.time()
for it in range(a.iters):
    frac = it / a.iters
    TAU[0] = a.tau0 * (a.tau1 / a.tau0) ** frac
    opt.zero_grad(); nll, obj = loss_fn(a.lu * frac, a.lh * frac); obj.sum().backward(); opt.step()
    if (it + 1) % a.every == 0:
        print(it + 1, "nll", sorted(round(x, 4) for x in nll.tolist())[:6], f"{time.time()-t0:.1f}s", flush=True)
order = torch.argsort(nll).tolist()
print("near-zero:", sum(l < 1e-3 for l in nll.tolist()), "of", R)
good = 0
for r in order[:8]:
    gg = gen(snapped(r)); good += gg[100] == 1.0
    print("restart", r, round(nll[r].item(), 5), gg)
