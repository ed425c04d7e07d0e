#!/usr/bin/env bash
# `make demo`: train add2 from 20 PTOs on the CPU, fine-tune, measure the raw weights' length
# generalisation and certify them (the main job), then a tour: experts, a rendered grid, a PTO dataset, a compiled expert at 10^6 digits.
# Everything it writes goes to demo_out/ (git-ignored); re-running replaces it.
set -euo pipefail
export COLUMNS="${COLUMNS:-120}"  # rich tables at full width when piped
OUT=demo_out
mkdir -p "$OUT"
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
rm -rf "$OUT/runs" "$OUT/results"

say "Train add2 from 20 PTOs of <= 3 digits (16 restarts side by side), then fine-tune the raw weights"
RUN="$OUT/runs/add2-s0"
dfst train add2 --seed 0 --out "$RUN"
say "The trained DFST's own float32 weights ($RUN/model), closed loop with plain h, to 10^5 digits"
dfst eval "$RUN" --digits 10,100,1000,10000,100000
echo "plot: $RUN/model/eval.png"
say "The same model before fine-tuning ($RUN/trained) fails early; the automaton read off it does not"
dfst eval "$RUN/trained" --digits 10,100 --rescale || echo "exit code $?: not exact at every length"
dfst eval "$RUN/extracted" --digits 10,100,1000
say "A proof about the fine-tuned float32 weights: exact on every instance of up to 400 digits"
dfst certify "$RUN" --digits 400

say "Tasks and expert sizes (k symbols, d states, DFST parameters)"
dfst tasks

say "Expert agents on small inputs, checked against Python's integers"
dfst solve add2 1011 111
dfst solve add10 99999 1
dfst solve mult10 456 12 --show
dfst solve mult2 1101 1011

say "A 1,000-digit decimal addition and a 200 x 200-digit multiplication"
dfst solve add10 --random 1000 --seed 1
dfst solve mult10 --random 200 --seed 2

say "A 10^6-bit binary addition with the compiled simulator"
dfst solve add2 --random 1000000 --seed 3

say "Record a PTO dataset of 20 add2 runs (operands of 1-3 bits) and inspect it"
dfst data add2 --samples 20 --max-digits 3 --seed 0 --out "$OUT/add2.pto.zip" --force
dfst data --inspect "$OUT/add2.pto.zip"

say "Compile the add2 expert into exact DFST weights and evaluate it up to 10^6 digits"
dfst compile add2 --out "$OUT/add2" --force
dfst eval "$OUT/add2" --digits 10,1000,100000,1000000
echo "plot: $OUT/add2/eval.png"
dfst report "$OUT/add2"
