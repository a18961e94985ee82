#!/bin/sh
# Behaviour fingerprint of four small runs (SADE, PRL, NMR, GMM): stdout, results and weights,
# hashed after dropping what legitimately changes between runs (timings, dates, paths of the
# run itself). Used to check that a refactoring changes nothing:
#   scripts/check-identical.sh OUT_DIR > before.txt ; (change) ; scripts/check-identical.sh OUT_DIR2 > after.txt ; diff
set -eu
cd "$(dirname "$0")/.."
out=${1:-.tmp/identical}
rm -rf "$out"; mkdir -p "$out"
T="./bin/tailor"
root=$(pwd)
strip() { sed -E "s#$root/##g" | sed -E 's/[0-9]+(\.[0-9]+)? ?(s|ms|min|h)\b/<t>/g; s/"(time|seconds|elapsed|wall|date|started|finished|created|ms|[a-zA-Z]*Seconds|[a-zA-Z]*Ms|[a-zA-Z]*_s|timestamp|host|version|durationMs)": *[^,}]*/"\1":<x>/g; s#'"$out"'#<out>#g'; }
common="--epochs 1 --train-max-per-class 30 --test-per-class 6 --threads 1"
for m in sade prl; do
  $T train -c configs/fmnist_lt_ir100_$m.json $common --out "$out/$m" > "$out/$m.stdout" 2>/dev/null
  $T test-all -r "$out/$m" --threads 1 >> "$out/$m.stdout" 2>/dev/null
done
$T nmr simulate --samples 8 --levels 3 --ratio 2 --points 1024 --seed 1 --out "$out/nmr-data" > "$out/nmr.stdout" 2>/dev/null
cat > "$out/nmr.json" <<JSON
{ "name": "nmr-check", "out": "$out/nmr", "seed": 0, "threads": 1,
  "data": { "train": "$out/nmr-data", "valFraction": 0.25, "crop": 256 },
  "model": { "channels": [8, 16, 16, 16], "se": "bottleneck" },
  "stageA": { "epochs": 1 }, "stageB": { "epochs": 1, "curriculumEpochs": 1 },
  "optim": { "lr": 1e-3, "warmupEpochs": 1 }, "batchSamples": 4, "logEvery": 5 }
JSON
$T nmr train -c "$out/nmr.json" >> "$out/nmr.stdout" 2>/dev/null
$T gmm fit --data examples/iris.csv --k 3 --covariance full --n-init 3 --out "$out/gmm.json" > "$out/gmm.stdout" 2>/dev/null
$T gmm select --data examples/iris.csv --k 1..4 >> "$out/gmm.stdout" 2>/dev/null
$T subgroup fit --data examples/subgroup_s1.csv --fixed W1,W2,W3 --membership U1,U2 --k 2 --out "$out/subgroup.json" >> "$out/gmm.stdout" 2>/dev/null
cd "$out"
for f in $(find . -type f \( -name '*.stdout' -o -name '*.json' -o -name '*.safetensors' -o -name '*.csv' -o -name '*.jsonl' \) | grep -v '/nmr-data/' | LC_ALL=C sort); do
  case "$f" in
    *.safetensors) h=$(sha256sum < "$f" | cut -c1-16) ;;
    *) h=$(strip < "$f" | sha256sum | cut -c1-16) ;;
  esac
  echo "$h $f"
done
