#!/usr/bin/env bash
# The add2 recipe comparison in docs/research/training.md: 20 samples of <= 3 digits, 10,000 iterations,
# closed-loop evaluation at 10, 100 and 1,000 digits every 2,500 iterations. Two runs at a time.
# Usage: scripts/recipe_sweep.sh [OUT_DIR]   (default runs/sweep; finished runs are kept)
set -euo pipefail
OUT=${1:-runs/sweep}
mkdir -p "$OUT"
common=(--samples 20 --max-digits 3 --iters 10000 --eval-every 2500 --eval-digits 10,100,1000
        --forward loop --json)
run() { # name seed flags...
  local name=$1 seed=$2; shift 2
  [ -f "$OUT/$name-s$seed/summary.json" ] && return 0
  dfst train add2 --out "$OUT/$name-s$seed" --seed "$seed" "${common[@]}" "$@" > /dev/null
}
jobs_for_seed() {
  local s=$1
  run published "$s" --sampler uniform &
  run noise "$s" --sampler uniform --noise 0.05 &
  wait
  run cover-noise-l1 "$s" --noise 0.05 --l1 1e-5 &
  run cover-noise-discrete "$s" --noise 0.05 --discrete 1.0 &
  wait
  run cover-noise-d18 "$s" --noise 0.05 --d 18 &
  run cover200-noise-discrete "$s" --samples 200 --noise 0.05 --discrete 1.0 &
  wait
}
for seed in 0 1 2; do jobs_for_seed "$seed"; done
dfst report-runs "$OUT"/*/ --markdown
# The 100,000-iteration runs of docs/research/training.md (about 5 CPU minutes each):
#   dfst train add2 --out runs/long/noise-l1-100k[-sN] [--seed N] --iters 100000 --noise 0.05 --l1 1e-5 \
#     --eval-every 10000 --eval-digits 10,100,1000 --forward loop
#   dfst train add2 --out runs/long/anneal-discrete-100k --iters 100000 --noise 0.1 --noise-final 0 \
#     --discrete 1.0 --eval-every 10000 --eval-digits 10,100,1000 --forward loop
