#!/usr/bin/env bash
# add2 over seeds: 20 samples of <= 3 digits (dfst train's default sampler, contexts), noise 0.05 +
# L1 1e-5, at most 100,000 iterations,
# stopping once the model or the automaton read off it is robust at 1,000 digits; then the automaton
# is extracted and both are evaluated at 10^5 digits. Two seeds at a time.
# Usage: scripts/add2_seeds.sh [OUT_DIR] [SEEDS...]   (default runs/add2-seeds, seeds 0-9)
set -euo pipefail
OUT=${1:-runs/add2-seeds}; shift || true
SEEDS=${*:-0 1 2 3 4 5 6 7 8 9}
mkdir -p "$OUT"
one() {
  local s=$1 dir="$OUT/s$1"
  [ -f "$dir/summary.json" ] || dfst train add2 --out "$dir" --seed "$s" --samples 20 --max-digits 3 \
    --iters 100000 --noise 0.05 --l1 1e-5 --extract --eval-every 5000 --eval-digits 100,1000 \
    --target-digits 1000 --forward loop --json > /dev/null
  # eval exits 1 when a length is not exact: a result to record, not an error of the script
  dfst eval "$dir/model" --digits 100,1000,100000 --rescale --json > /dev/null || [ $? -eq 1 ]
  if dfst extract "$dir" --out "$dir/extracted" --force --json > /dev/null; then
    dfst eval "$dir/extracted" --digits 100,1000,100000 --json > /dev/null || [ $? -eq 1 ]
  fi
}
set -- $SEEDS
while [ $# -gt 0 ]; do
  one "$1" & if [ $# -gt 1 ]; then one "$2" & fi
  wait; shift; [ $# -gt 0 ] && shift
done
dfst report-runs "$OUT"/s*/ --markdown
dfst report "$OUT"/s*/model $(ls -d "$OUT"/s*/extracted 2>/dev/null) --markdown
