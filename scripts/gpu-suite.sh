#!/bin/sh
# A benchmark suite on one GPU, after scripts/gpu-check.sh has built the addon there:
#
#   scripts/gpu-suite.sh SUITE.json OUTDIR SECONDS [ARCHIVE]
#
# Each run of the suite (model x seed, seed by seed) trains and evaluates its test-time methods in
# its own process (`tailor benchmark --models M --seeds S --device cuda`, THREADS libtorch threads,
# default 1). JOBS of them (default 6) share the GPU at a time and the next run starts when one
# ends: the small ResNets are launch-bound one by one, but six of them already keep an H200 at
# 96-99 % (measured with 13), so more only leave more runs unfinished at the deadline.
# Everything stops SECONDS after the start, including the last call without --models that writes
# the table (it gets TABLE_SECONDS, default 90, of them and runs on the same device, since it
# evaluates the methods a stopped process left). Finished runs stay finished, and a later call
# with the same OUTDIR skips them and resumes the others from their last checkpoint (on a warm
# machine /tmp survives between calls).
# The last line printed is one JSON object: suite_seconds, mps, branch_streams, per run (MODEL/SEED)
# the seconds of its training epochs and of its test-time methods, and the table's mean top-1 rows;
# "failed" names each run that ended without results by the `tailor:` error of its log, and
# "graph_notes" gives what graph mode said in each run (a capture that fell back to one stream or
# to eager steps), so that one look at the line says whether the runs trained as intended.
# ARCHIVE (a .tar.gz) receives the table and each run's results and methods, without weights.
# Stopped from outside (TERM or INT to its process group, as `timeout` does at a device call's
# limit), it still writes ARCHIVE with the runs finished so far and a last line with "stopped"
# (table_rows null when the table was not made), then exits with 143.
# Beside it, ckpt-MODEL-seedS.tgz holds the last checkpoint of each unfinished run (about 8 MB):
# unpacked into the same directory as ARCHIVE, `tailor benchmark` continues those runs anywhere.
# GRAPH (auto, on or off; default auto) is each run's `--graph`: graph mode against eager mode is
# the same suite twice, with GRAPH=auto and GRAPH=off into two OUTDIRs, side by side with
# `npm run bench -- suite-compare GRAPH_OUT EAGER_OUT --names graph,eager` (under on, a run whose
# step cannot be captured stops with the reason; every model of the shipped suites can be).
# BRANCH_STREAMS (on or off; default on): off is each run's `--no-branch-streams`, graph mode
# with the whole step on one CUDA stream instead of each expert (and PRL draw) on its own.
# BRANCH_STREAMS=from:AB.json takes the verdict `npm run bench -- epoch-gpu` wrote there for this
# GPU (its branch_streams: off where one stream was faster, the branch-stream capture failed or
# the streams' check found a missing wait; on where the file has no verdict).
# FIRST_MODELS=PRL,PRL-released starts those models' runs first within each seed: with the
# longest runs started first, fewer slots wait on them at the end (the suite's order otherwise).
# MODELS=SADE,LDAM-DRW (names of the suite's models) runs only those models' runs; the table
# still covers the whole suite (the others as missing). With GRAPH=off it gives the eager side of
# the graph-vs-eager accuracy comparison on the same machine for the models in question, in far
# less time than the whole suite eagerly.
# MPS=1 runs the processes under an MPS control daemon of the suite's own (pipe and log directories
# under TMPDIR, stopped at the end), so that their kernels share the GPU's SMs at once instead of
# taking turns: one run's ResNet-32 kernels at batch 128 fill a small part of an H100/H200, and
# six processes taking turns keep it 98 % busy at the same rate of work as one process in graph
# mode (measured). A daemon an earlier call left on that pipe is reused. Where the daemon does not
# start or a CUDA process cannot reach it, the suite runs without it and its last line says so
# ("mps": "unavailable: ...").
# Fashion-MNIST is taken from .gpu-data/fashion-mnist when the default place lacks it
# (scripts/gpu-check.sh --prepare --with-data: the images the full Fashion-MNIST-LT suite reads,
# checked to cover SUITE before the runs start; --with-data=full: all of it).
set -u
cd "$(dirname "$0")/.."
usage='usage: scripts/gpu-suite.sh SUITE.json OUTDIR SECONDS [ARCHIVE]'
if [ $# -lt 3 ] || [ $# -gt 4 ]; then echo "gpu-suite: $usage" >&2; exit 2; fi
case $3 in
  '' | *[!0-9]* | 0*) echo "gpu-suite: SECONDS needs a positive whole number, got '$3' ($usage)" >&2; exit 2 ;;
esac
if [ ! -f "$1" ]; then echo "gpu-suite: no suite file '$1' ($usage)" >&2; exit 2; fi
suite=$1; out=$2; secs=$3; archive=${4:-}
table_secs=${TABLE_SECONDS:-90}
case $archive in /* | '') ;; *) archive=$(pwd)/$archive ;; esac
NODE=$(command -v node || echo "${TMPDIR:-/tmp}/tailor-gpu-check/bin/node")
DEVICE=${DEVICE:-cuda}
fm=/usr/share/datasets/fashion-mnist
if [ ! -f "$fm/train-images-idx3-ubyte.gz" ] && [ -d .gpu-data/fashion-mnist ]; then
  mkdir -p /usr/share/datasets && cp -r .gpu-data/fashion-mnist "$fm"
fi
# A cut-down Fashion-MNIST (SUBSET.json, scripts/fmnist-subset.mjs) must hold every image this
# suite reads: checked before any run starts, so no run trains on a zeroed image.
if [ -f "$fm/SUBSET.json" ]; then
  "$NODE" scripts/fmnist-subset.mjs verify "$fm" "$suite" >&2 || exit 2
fi
# the runs to make, seed-major: the first seeds of every model finish before later seeds begin;
# within a seed, FIRST_MODELS start first (the longest runs: less waiting on them at the end)
runs=$("$NODE" -e '
const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const names = (v) => (process.env[v] || "").split(",").filter(Boolean);
for (const v of ["MODELS", "FIRST_MODELS"]) {
  const unknown = names(v).filter((n) => !s.models.some((m) => m.name === n));
  if (unknown.length) {
    console.error(`gpu-suite: ${v} names ${unknown.join(", ")}, which the suite lacks (its models: ${s.models.map((m) => m.name).join(", ")})`);
    process.exit(2);
  }
}
const only = names("MODELS");
const first = names("FIRST_MODELS");
const rank = (m) => (first.includes(m.name) ? first.indexOf(m.name) : first.length);
const models = s.models.filter((m) => only.length === 0 || only.includes(m.name));
models.sort((a, b) => rank(a) - rank(b));
const runs = s.seeds.flatMap((seed) => models.map((m) => m.name + " " + seed));
console.error(`gpu-suite: ${runs.length} runs, in this order: ${runs.join(", ")}`);
console.log(runs.join("\n"));
' "$suite") || exit 2
# from:FILE takes the setting epoch-gpu's JSON line in FILE gives for this GPU (its branch_streams)
case ${BRANCH_STREAMS:=on} in
  from:*)
    BRANCH_STREAMS=$("$NODE" -e '
      const file = process.argv[1];
      let v = null;
      try { v = JSON.parse(require("fs").readFileSync(file, "utf8").trim().split("\n").pop()).branch_streams; } catch {}
      const known = v !== null && typeof v === "object" && (v.use === "on" || v.use === "off");
      console.error(`gpu-suite: BRANCH_STREAMS=${known ? v.use : "on"} (${known ? v.why : file + " gives no branch_streams verdict: the default"})`);
      console.log(known ? v.use : "on");' "${BRANCH_STREAMS#from:}") || exit 2 ;;
esac
case $BRANCH_STREAMS in
  on) branch_flag= ;;
  off) branch_flag=--no-branch-streams ;;
  *) echo "gpu-suite: BRANCH_STREAMS must be on or off, got '$BRANCH_STREAMS'" >&2; exit 2 ;;
esac
mkdir -p "$out/logs"
# a table an earlier call made is not this call's (a stopped call leaves none)
rm -f "$out/table.json"
mps=off
if [ "${MPS:-0}" = 1 ]; then
  mps="unavailable: nvidia-cuda-mps-control is not on PATH"
  if command -v nvidia-cuda-mps-control >/dev/null 2>&1; then
    CUDA_MPS_PIPE_DIRECTORY=${TMPDIR:-/tmp}/tailor-mps/pipe
    CUDA_MPS_LOG_DIRECTORY=${TMPDIR:-/tmp}/tailor-mps/log
    export CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    stop_mps() { echo quit | nvidia-cuda-mps-control > /dev/null 2>&1; }
    probe="const t = await import('$(pwd)/dist/src/torch/index.js'); t.randn([4], 'float32', '$DEVICE').sum().item();"
    # a daemon an earlier call left running on this pipe (a call cut off at its time limit never
    # reaches the exit trap) answers get_server_list: it is used as it is
    if { nvidia-cuda-mps-control -d || echo get_server_list | nvidia-cuda-mps-control > /dev/null 2>&1; } &&
      timeout 60 "$NODE" --input-type=module -e "$probe" > "$out/logs/mps.log" 2>&1; then
      mps=on
      # stopped however the suite ends (a stop from outside exits too, and the exit stops the daemon)
      trap stop_mps EXIT
    else
      stop_mps
      unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
      mps="unavailable: the daemon did not start or a CUDA process could not reach it ($out/logs/mps.log)"
    fi
  fi
fi
# the table takes TABLE_SECONDS of SECONDS, and a run starts only with more than 20 s left
if [ "$secs" -le $((table_secs + 20)) ]; then
  echo "gpu-suite: SECONDS $secs leaves no time to train (TABLE_SECONDS=$table_secs of it go to the table, and a run starts only with 20 more): no run starts; give more than $((table_secs + 20))" >&2
fi
start=$(date +%s)
deadline=$((start + secs))
train_deadline=$((deadline - table_secs))
# The archive and the last line: at the end, and also when the call is stopped from outside
# (TERM or INT, as `timeout` does at a device call's limit) with the runs finished so far, so that
# a SECONDS longer than the call allows loses no finished run (the table is then left for
# `tailor benchmark --max-runs 0` here).
finish() {
  elapsed=$(($(date +%s) - start))
  if [ -n "$archive" ]; then
    base=$(dirname "$out"); name=$(basename "$out")
    tar -czf "$archive" --exclude='*.pt' --exclude='*.bin' --exclude='*.safetensors' --exclude='checkpoint-*' \
      --exclude='model_best*' -C "$base" "$name" 2> /dev/null
    for d in "$out"/runs/*/seed-*; do
      [ -f "$d/results.json" ] || [ ! -f "$d/checkpoint-last.json" ] && continue
      run=${d#"$base"/}; model=$(basename "$(dirname "$d")"); seed=${d##*seed-}
      (cd "$base" && tar -czf "$(dirname "$archive")/ckpt-$model-seed$seed.tgz" "$run"/checkpoint-last.* 2> /dev/null)
    done
  fi
  "$NODE" -e '
const [out, secs, mps, branchStreams, stopped] = process.argv.slice(1);
const fs = require("fs");
let table = null; try { table = JSON.parse(fs.readFileSync(out + "/table.json", "utf8")); } catch {}
const rows = table ? Object.fromEntries(table.rows.map((r) => [r.model + "/" + r.method, r.mean_top1 ? { mean: r.mean_top1.mean, sd: r.mean_top1.sd, n: r.mean_top1.n } : r.unsupported ?? null])) : null;
// where the time went, per run: its training epochs (results.json) and its test-time methods (its log)
const runs = {};
for (const model of fs.existsSync(out + "/runs") ? fs.readdirSync(out + "/runs") : [])
  for (const entry of fs.readdirSync(out + "/runs/" + model)) {
    const seed = entry.replace("seed-", "");
    let train = null, testTime = null;
    try { train = +JSON.parse(fs.readFileSync(out + "/runs/" + model + "/" + entry + "/results.json", "utf8")).history.reduce((s, h) => s + h.seconds, 0).toFixed(1); } catch {}
    try { testTime = +/test-time .*: done in ([0-9.]+) s/.exec(fs.readFileSync(out + "/logs/" + model + "-" + seed + ".log", "utf8"))[1]; } catch {}
    runs[model + "/" + seed] = { train_s: train, test_time_s: testTime };
  }
// runs that ended without results, with the error their log names (a device, a config), and
// what graph mode said in each run (a capture that failed: on one stream, or eagerly)
const failed = {}, graphNotes = {};
for (const log of fs.existsSync(out + "/logs") ? fs.readdirSync(out + "/logs") : []) {
  const m = /^(.+)-(\d+)\.log$/.exec(log);
  if (!m) continue;
  const lines = fs.readFileSync(out + "/logs/" + log, "utf8").split("\n");
  const notes = lines.filter((l) => /^\s*graph mode: /.test(l)).map((l) => l.trim().slice(0, 300));
  if (notes.length) graphNotes[m[1] + "/" + m[2]] = notes;
  if (fs.existsSync(out + "/runs/" + m[1] + "/seed-" + m[2] + "/results.json")) continue;
  const named = lines.filter((l) => l.startsWith("tailor: ")).pop();
  if (named) failed[m[1] + "/" + m[2]] = named.slice(0, 400);
}
const line = { suite_seconds: Number(secs), mps, branch_streams: branchStreams, runs, table_rows: rows };
if (Object.keys(failed).length) line.failed = failed;
if (Object.keys(graphNotes).length) line.graph_notes = graphNotes;
if (stopped) line.stopped = stopped;
console.log(JSON.stringify(line));
' "$out" "$elapsed" "$mps" "$BRANCH_STREAMS" "${1:-}"
}
stopped_from_outside() {
  trap - INT TERM
  finish "by SIG$1 after $(($(date +%s) - start)) s (the runs finished by then are in the archive)"
  exit 143
}
trap 'stopped_from_outside TERM' TERM
trap 'stopped_from_outside INT' INT
# A stop from outside reaches the whole process group (timeout, Ctrl-C): the runs end with it,
# and the trap runs as soon as the pipeline has ended.
printf '%s\n' "$runs" |
  while read -r m s; do
    [ -f "$out/runs/$m/seed-$s/benchmark-methods.json" ] && [ -f "$out/runs/$m/seed-$s/results.json" ] || echo "$m $s"
  done |
  NODE=$NODE DEVICE=$DEVICE GRAPH=${GRAPH:-auto} BRANCH_FLAG=$branch_flag xargs -P "${JOBS:-6}" -L 1 sh -c '
    left=$(('"$train_deadline"' - $(date +%s)))
    [ "$left" -gt 20 ] || exit 0
    timeout "$left" "$NODE" dist/src/cli/main.js benchmark -c "'"$suite"'" --out "'"$out"'" --models "$0" --seeds "$1" \
      --device "$DEVICE" --graph "$GRAPH" $BRANCH_FLAG --threads "${THREADS:-1}" --json > "'"$out"'/logs/$0-$1.json" 2> "'"$out"'/logs/$0-$1.log"
    exit 0'
left=$((deadline - $(date +%s)))
[ "$left" -gt 5 ] || left=5
timeout "$left" "$NODE" dist/src/cli/main.js benchmark -c "$suite" --out "$out" --max-runs 0 --device "$DEVICE" \
  --threads "${THREADS:-1}" --json > "$out/table.json" 2> "$out/logs/table.log"
finish
