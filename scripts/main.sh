#!/bin/sh
# The main job of the README: set up (idempotent), then train PRL (the paper's method) and the
# SADE baseline on Fashion-MNIST-LT IR100 with the same backbone and budget, evaluate both on the
# eleven test distributions, run test-time adaptation on both (SADE aggregation and prior matching;
# for PRL also the preference search; the oracle prior) and write the reports.
# The configs' budget: head class of 1,000 images (2,478 training images at IR 100), 300 test
# images per class, 30 epochs. EPOCHS=N changes the length, FULL=1 uses all of Fashion-MNIST-LT
# (14,886 training images, the whole test set; one epoch of either model measured 110 s on two free
# cores, so about 1 h 50 min of training against 20-30 minutes). RUNS=DIR sets where the runs go
# (default runs/main).
set -eu
cd "$(dirname "$0")/.."
./scripts/setup.sh
RUNS=${RUNS:-runs/main}
EPOCHS_ARG=""
[ -n "${EPOCHS:-}" ] && EPOCHS_ARG="--epochs $EPOCHS"
if [ -n "${FULL:-}" ]; then EPOCHS_ARG="$EPOCHS_ARG --train-max-per-class 6000 --test-per-class 1000"; fi
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
./bin/tailor test-all -r "$RUNS/sade" --save > /dev/null
./bin/tailor test-time-train -c configs/fmnist_test_time.json -r "$RUNS/prl" --save
./bin/tailor test-time-train -c configs/fmnist_test_time.json -r "$RUNS/sade" --save
./bin/tailor report --run "$RUNS/prl"
./bin/tailor report --run "$RUNS/sade"
./bin/tailor compare "$RUNS/prl" "$RUNS/sade"
echo "main: reports in $RUNS/prl/report.html and $RUNS/sade/report.html"
