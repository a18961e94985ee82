#!/bin/sh
# A benchmark suite on one GPU, after scripts/gpu-check.sh has built the addon there:
#
#   scripts/gpu-suite.sh SUITE.json OUTDIR SECONDS [ARCHIVE]
#
# Each model of the suite trains in its own process (`tailor benchmark --models M --device cuda`,
# two libtorch threads each): the small ResNets leave the GPU mostly idle, so the models share it.
# Every process stops after SECONDS; finished runs stay finished and a later call with the same
# OUTDIR skips them. Then one call without --models writes the table of what is finished, and
# ARCHIVE (a .tar.gz) receives the table and each run's results and methods, without weights.
# Fashion-MNIST is taken from .gpu/fashion-mnist when the default place lacks it
# (scripts/gpu-check.sh --prepare --with-data).
set -u
cd "$(dirname "$0")/.."
suite=$1; out=$2; secs=$3; archive=${4:-}
NODE=$(command -v node || echo "${TMPDIR:-/tmp}/tailor-gpu-check/bin/node")
fm=/usr/share/datasets/fashion-mnist
if [ ! -f "$fm/train-images-idx3-ubyte.gz" ] && [ -d .gpu/fashion-mnist ]; then
  mkdir -p /usr/share/datasets && cp -r .gpu/fashion-mnist "$fm"
fi
mkdir -p "$out/logs"
models=$("$NODE" -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).models.map((m) => m.name).join("\n"))' "$suite")
start=$(date +%s)
for m in $models; do
  timeout "$secs" "$NODE" dist/src/cli/main.js benchmark -c "$suite" --out "$out" --models "$m" --device "${DEVICE:-cuda}" \
    --threads 2 --json > "$out/logs/$m.json" 2> "$out/logs/$m.log" &
done
wait
elapsed=$(($(date +%s) - start))
"$NODE" dist/src/cli/main.js benchmark -c "$suite" --out "$out" --max-runs 0 --json > "$out/table.json" 2> "$out/logs/table.log"
if [ -n "$archive" ]; then
  tar -czf "$archive" --exclude='*.pt' --exclude='*.bin' --exclude='*.safetensors' --exclude='checkpoint-*' \
    --exclude='model_best*' -C "$(dirname "$out")" "$(basename "$out")"
fi
"$NODE" -e '
const [out, secs] = process.argv.slice(1);
const fs = require("fs");
let table = null; try { table = JSON.parse(fs.readFileSync(out + "/table.json", "utf8")); } catch {}
const rows = table ? Object.fromEntries(table.rows.map((r) => [r.model + "/" + r.method, r.mean_top1 ? { mean: r.mean_top1.mean, sd: r.mean_top1.sd, n: r.mean_top1.n } : r.unsupported ?? null])) : null;
console.log(JSON.stringify({ suite_seconds: Number(secs), table_rows: rows }));
' "$out" "$elapsed"
