#!/bin/bash
# Train add2 with its recipe, fine-tune the raw weights (dfst finetune, defaults), evaluate them
# closed loop (plain h) to 10^5 digits, for each seed given: docs/finetune.md's table.
#   scripts/finetune_seeds.sh OUT SEED...      (about 7 CPU minutes per seed)
# Run two at a time on two cores: scripts/finetune_seeds.sh runs/ft 1 2 & scripts/finetune_seeds.sh runs/ft 7 8
set -u
out=$1; shift
mkdir -p "$out"
for s in "$@"; do
  /usr/bin/time -f '%e s %U user' dfst train add2 --seed "$s" --out "$out/add2-s$s" --json \
    > "$out/train-s$s.json" 2> "$out/train-s$s.err"
  /usr/bin/time -f '%e s %U user' dfst finetune "$out/add2-s$s" --out "$out/ft-s$s" --json \
    > "$out/ft-s$s.json" 2> "$out/ft-s$s.err"
  dfst eval "$out/ft-s$s/model" --digits 10,100,1000,10000,100000 --json > "$out/eval-s$s.json"
  echo "seed $s: eval exit $? (0: robust at every length)"
done
