#!/bin/sh
# The NMR denoiser at the method's full budget on one GPU, after scripts/gpu-check.sh has built
# the addon there (GPU_CHECK_BUILD_ONLY=1 scripts/gpu-check.sh):
#
#   scripts/gpu-nmr.sh OUTDIR SECONDS
#
# simulates the synthetic yardstick data (the commands of BENCHMARKS.md, "Single-scan yardstick:
# synthetic data"), trains configs/nmr_seed_gpu.json (64-128-256-256, 40 + 50 epochs) on the GPU
# for at most SECONDS less the yardstick's share (checkpoints are written every epoch, so a run
# cut short keeps its best epoch so far), then scores the best checkpoint with the yardstick
# (raw levels and fusion, the operating-point columns, fidelity 0.1 and 0.2) on the machine's
# cores. OUTDIR receives yardstick.json, train.log and nmr-gpu.tgz (the checkpoint and its
# config, to score again anywhere with `tailor nmr yardstick --model best.json --data ...`).
set -u
cd "$(dirname "$0")/.."
usage='usage: scripts/gpu-nmr.sh OUTDIR SECONDS'
if [ $# -ne 2 ]; then echo "gpu-nmr: $usage" >&2; exit 2; fi
yard_secs=${YARDSTICK_SECONDS:-150}
case $2 in
  '' | *[!0-9]* | 0*) echo "gpu-nmr: SECONDS needs a positive whole number, got '$2' ($usage)" >&2; exit 2 ;;
esac
if [ "$2" -le "$yard_secs" ]; then
  echo "gpu-nmr: SECONDS $2 leaves no time to train (YARDSTICK_SECONDS=$yard_secs of it go to the yardstick); give more" >&2
  exit 2
fi
out=$1; secs=$2
NODE=$(command -v node || echo "${TMPDIR:-/tmp}/tailor-gpu-check/bin/node")
T="$NODE dist/src/cli/main.js"
mkdir -p "$out"
start=$(date +%s)
$T nmr simulate --samples 400 --levels 4 --ratio 2 --points 4096 --seed 11 --out runs/nmr/y-train > /dev/null &&
  $T nmr simulate --samples 16 --levels 4 --ratio 2 --points 4096 --seed 12 --out runs/nmr/y-val > /dev/null &&
  $T nmr simulate --samples 60 --levels 4 --ratio 2 --points 4096 --seed 13 --out runs/nmr/y-test > /dev/null ||
  { echo '{"error":"nmr simulate failed"}'; exit 1; }
left=$((secs - ($(date +%s) - start) - yard_secs))
timeout "$left" $T nmr train -c configs/nmr_seed_gpu.json --device cuda > "$out/train.log" 2>&1
train_rc=$?
tar -czf "$out/nmr-gpu.tgz" configs/nmr_seed_gpu.json runs/nmr/seed-gpu/best.json runs/nmr/seed-gpu/best.safetensors 2> /dev/null
left=$((secs - ($(date +%s) - start)))
timeout "$left" $T nmr yardstick --model gpu=runs/nmr/seed-gpu/best.json --data runs/nmr/y-test \
  --baselines raw,matched --fidelity 0.1,0.2 --json "$out/yardstick.json" > "$out/yardstick.txt" 2>&1
yard_rc=$?
"$NODE" -e '
const [trainRc, yardRc, log] = process.argv.slice(1);
const lines = require("fs").readFileSync(log, "utf8").split("\n").filter(Boolean);
console.log(JSON.stringify({ train_rc: Number(trainRc), yardstick_rc: Number(yardRc), train_tail: lines.slice(-4) }));
' "$train_rc" "$yard_rc" "$out/train.log"
