#!/bin/sh
# The main job of the README: set up (idempotent), then train PRL (the paper's method) and the
# SADE baseline on Fashion-MNIST-LT IR100 with the same backbone and budget, evaluate both on the
# eleven test distributions, run test-time training on the PRL model, and write the reports.
# EPOCHS=N shortens or lengthens the runs (default: the configs' 20 epochs). RUNS=DIR sets where.
set -eu
cd "$(dirname "$0")/.."
./scripts/setup.sh
RUNS=${RUNS:-runs/main}
EPOCHS_ARG=""
[ -n "${EPOCHS:-}" ] && EPOCHS_ARG="--epochs $EPOCHS"
resume_or_start() { # $1 config, $2 run directory: resumes an interrupted run, skips a finished one
  if [ -f "$2/results.json" ]; then
    echo "main: $2 already finished (delete it to retrain)"
  elif [ -f "$2/checkpoint-last.json" ]; then
    ./bin/tailor train -r "$2/checkpoint-last.json" $EPOCHS_ARG
  else
    ./bin/tailor train -c "$1" --out "$2" $EPOCHS_ARG
  fi
}
resume_or_start configs/fmnist_lt_ir100_prl.json "$RUNS/prl"
resume_or_start configs/fmnist_lt_ir100_sade.json "$RUNS/sade"
./bin/tailor test-time-train -c configs/fmnist_test_time.json -r "$RUNS/prl" --save
./bin/tailor test-all -r "$RUNS/sade" --save > /dev/null
./bin/tailor report --run "$RUNS/prl"
./bin/tailor report --run "$RUNS/sade"
./bin/tailor compare "$RUNS/prl" "$RUNS/sade"
echo "main: reports in $RUNS/prl/report.html and $RUNS/sade/report.html"
