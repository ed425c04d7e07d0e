#!/bin/bash
# Train TASK with its recipe (the fine-tuning phase included), evaluate RUN/model closed loop with
# plain h, and certify it (plain and rescaled), for each seed given: docs/research/finetune.md's tables.
#   scripts/finetune_seeds.sh OUT TASK DIGITS SEED...
#   e.g. scripts/finetune_seeds.sh runs/ft add2 10,100,1000,10000,100000,1000000 11 23 57
# (add2: about 1.5 CPU minutes per seed and 2 more for the evaluation at 10^6 and the certificates.)
set -u
out=$1; task=$2; digits=$3; shift 3
mkdir -p "$out"
for s in "$@"; do
  run="$out/$task-s$s"
  /usr/bin/time -f '%e s %U user' dfst train "$task" --seed "$s" --out "$run" --json > "$run.json" 2> "$run.err"
  dfst eval "$run/model" --digits "$digits" --json > "$run-eval.json"
  echo "seed $s: eval exit $? (0: robust at every length)"
  dfst certify "$run/model" --json > "$run-cert.json"
  dfst certify "$run/model" --rescale --json > "$run-cert-rescaled.json"
done
