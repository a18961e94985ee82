#!/bin/sh
# The GPU check, for a machine with an NVIDIA GPU and a CUDA PyTorch (its python3 importing torch).
#
#   scripts/gpu-check.sh --prepare [--with-data[=full]]
#                                    on the development machine: gathers what the GPU machine may
#                                    lack into .gpu/ (a Node binary, the Node-API, Gloo and
#                                    libjpeg headers, libjpeg, node-addon-api, the compiled
#                                    dist/, the runtime npm packages with sharp for the image
#                                    pipeline benchmark); carry .gpu there. --with-data also
#                                    writes into .gpu-data/ the part of Fashion-MNIST the full
#                                    Fashion-MNIST-LT suite reads (12 MB: .gpu, .gpu-data and the
#                                    tree travel together within the device tool's 64 MiB);
#                                    =full copies all of it (30 MB: carry it in a later call than
#                                    the one that builds; what a call leaves there stays for the
#                                    next while the machine is warm).
#   scripts/gpu-check.sh             on the GPU machine: builds the addon against
#                                    TAILOR_LIBTORCH (default: python) with the compiler directly
#                                    (no node-gyp, make or network needed), then prints ONE JSON line:
#     version  `tailor version --json --check` (libtorch, ABI, CUDA devices, cuDNN, Gloo/NCCL, schemas)
#     gpu      bench/gpu.ts: CUDA vs CPU golden values of the 3-expert ResNet-32 forward/backward,
#              checkpoint CPU->GPU->CPU, CUDA RNG resume; train images/s vs PyTorch on the same GPU
#              (ratio, target >= 0.9); NMR U-Net denoise spectra/s at 32k points (target 100/s)
#     amp_bf16 the same training run under --amp bf16 (both sides)
#     gloo_cuda a two-rank Gloo job on CUDA tensors (tailor launch -- dist-check --device cuda:0)
#     images_train_torch  bench/images_train_torch.py (Python only): SADE ImageNet-LT ResNeXt-50
#              training images/s in float32, bf16 and bf16 + channels-last, and bf16 + channels-last
#              vs float32 (logits, first-layer gradient) from the same weights
#     epoch_gpu bench/epoch-gpu.ts --torch --check: full Fashion-MNIST-LT epochs of SADE and PRL,
#              tailor eager and graph mode (branch streams, one stream) against PyTorch (DataLoader
#              4/8 workers, device data, the whole step in one CUDA graph on one stream and with
#              experts on streams), and graph mode's checks (graph vs eager, streams vs one, resume;
#              again under cuDNN's deterministic algorithms)
#     graphs_build  the CUDA graph binding's compile error, when it had to be built without CUDA
#     nccl_build  c10d's NCCL backend's compile error, when the addon had to be built without NCCL
#              (GPU_CHECK_BUILD_ONLY=1 prints both as graphs_error and nccl_error in its build line)
#     images_train_tailor  bench/images-train.ts: images_train_torch's measurement in tailor, at
#              the same batch (both report the GPU's utilisation over their timed steps)
#     images_pipeline  bench/images.ts on the machine's cores: tailor's image-list loader against
#              torchvision's DataLoader at 4, 8 and 16 workers, 6,000 synthetic JPEGs
#     images_e2e  bench/images-e2e.ts: the SADE ResNeXt-50 config trained from those JPEGs by
#              `tailor train` (8 workers) against PyTorch with an 8-worker DataLoader, float32 and
#              bf16 + channels-last, last epoch's images/s and GPU utilisation
# GPU_CHECKS=version,epoch_gpu (a comma list of the fields above) runs only those checks.
# GPU_CHECK_OUT=DIR copies each check's output (NAME.out, NAME.err) there as soon as it ends.
set -u
want() { case ",${GPU_CHECKS:-all}," in *",all,"* | *",$1,"*) return 0 ;; *) return 1 ;; esac; }
cd "$(dirname "$0")/.."
case ${1:-} in
  '' | --prepare) ;;
  *) echo "gpu-check: unknown argument '$1' (usage: scripts/gpu-check.sh [--prepare [--with-data[=full]]]; the checks are chosen with GPU_CHECKS)" >&2; exit 2 ;;
esac
# a misspelt check would otherwise run nothing and cost a device call
checks="version gpu amp_bf16 gloo_cuda images_train_torch epoch_gpu images_train_tailor images_pipeline images_e2e"
if [ "${1:-}" != --prepare ]; then
  for c in $(printf '%s' "${GPU_CHECKS:-all}" | tr ',' ' '); do
    case " all $checks " in
      *" $c "*) ;;
      *) echo "gpu-check: GPU_CHECKS names '$c', which is not a check (all, or a comma list of: $checks)" >&2; exit 2 ;;
    esac
  done
fi
root=$(pwd)

if [ "${1:-}" = "--prepare" ]; then
  case ${2:-} in
    '' | --with-data | --with-data=full) ;;
    *) echo "gpu-check: --prepare takes --with-data or --with-data=full after it, got '$2'" >&2; exit 2 ;;
  esac
  set -e
  rm -rf .gpu && mkdir -p .gpu/napi .gpu/gloo-include
  node_bin=$(readlink -f "$(command -v node)")
  # xz keeps the carried tree under the device tool's 64 MiB (gzip where xz is missing).
  if command -v xz >/dev/null 2>&1; then xz -T0 -9 -c "$node_bin" > .gpu/node.xz; else gzip -9 -c "$node_bin" > .gpu/node.gz; fi
  for h in node_api.h node_api_types.h js_native_api.h js_native_api_types.h; do cp "/usr/include/node/$h" .gpu/napi/; done
  cp -r node_modules/node-addon-api .gpu/node-addon-api
  cp -r /usr/include/gloo .gpu/gloo-include/gloo
  # libjpeg-turbo's headers and library for the addon's JPEG decoder (native/src/jpeg.cc), for a
  # machine without libjpeg62-turbo-dev; used only where the system has no jpeglib.h
  mkdir -p .gpu/jpeg/include .gpu/jpeg/lib
  for h in jpeglib.h jerror.h jmorecfg.h; do cp "/usr/include/$h" .gpu/jpeg/include/; done
  cp "$(dirname "$(readlink -f /usr/include/jpeglib.h)")"/*/jconfig.h .gpu/jpeg/include/ 2>/dev/null ||
    cp /usr/include/"$(gcc -print-multiarch)"/jconfig.h .gpu/jpeg/include/
  cp "$(readlink -f /usr/lib/"$(gcc -print-multiarch)"/libjpeg.so)" .gpu/jpeg/lib/libjpeg.so.62
  node node_modules/typescript/bin/tsc -p tsconfig.json
  # The compiled library without source maps and tests: what the checks run.
  tar --exclude='*.map' --exclude='dist/test' --exclude='dist/.tsbuildinfo' -czf .gpu/dist.tar.gz dist
  # The runtime npm packages, sharp's libvips included (it decodes image lists: bench/images.ts),
  # without what nothing loads at run time (source maps, protobufjs's code-generating CLI, zod's
  # TypeScript sources), xz-compressed where xz is installed.
  npm ls --omit=dev --all --parseable | sed 1d | sed "s|^$(pwd)/node_modules/||" > .gpu/packages.txt
  nm_excludes="--exclude=*.map --exclude=protobufjs/cli --exclude=zod/src"
  if command -v xz >/dev/null 2>&1; then
    # shellcheck disable=SC2086
    tar -C node_modules $nm_excludes -cf - -T .gpu/packages.txt | xz -T0 -9 > .gpu/node_modules.txz
  else
    # shellcheck disable=SC2086
    tar -C node_modules $nm_excludes -czf .gpu/node_modules.tgz -T .gpu/packages.txt
  fi
  rm .gpu/packages.txt
  # --with-data: Fashion-MNIST for the GPU benchmark suite (scripts/gpu-suite.sh), cut down to the
  # images the full Fashion-MNIST-LT suite reads (7 MB instead of 26 MB: scripts/fmnist-subset.mjs),
  # so that .gpu, .gpu-data and the tree travel together in one call; --with-data=full copies the
  # whole data set (then .gpu-data needs a call of its own after the build).
  case ${2:-} in
    --with-data)
      rm -rf .gpu-data
      node scripts/fmnist-subset.mjs write .gpu-data/fashion-mnist configs/suites/fmnist_lt_ir100_full.json ;;
    --with-data=full) rm -rf .gpu-data && mkdir -p .gpu-data && cp -r /usr/share/datasets/fashion-mnist .gpu-data/ ;;
  esac
  du -sh .gpu .gpu-data 2>/dev/null
  echo 'gpu-check: prepared; run `scripts/gpu-check.sh` there carrying [".gpu"] (and ".gpu-data" for gpu-suite.sh)'
  exit 0
fi

log=${TMPDIR:-/tmp}/tailor-gpu-check
mkdir -p "$log"
# Node: the one on PATH, else the carried binary.
if command -v node >/dev/null 2>&1; then
  NODE=$(command -v node)
else
  mkdir -p "$log/bin"
  if [ -f .gpu/node.xz ]; then
    xz -dc .gpu/node.xz > "$log/bin/node" 2>/dev/null ||
      python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' .gpu/node.xz "$log/bin/node"
  else
    gunzip -c .gpu/node.gz > "$log/bin/node"
  fi
  chmod +x "$log/bin/node"
  NODE=$log/bin/node
  PATH=$log/bin:$PATH
  export PATH
fi
[ -f dist/src/cli/main.js ] || { [ -f .gpu/dist.tar.gz ] && tar -xzf .gpu/dist.tar.gz; }
if [ ! -d node_modules/zod ]; then
  mkdir -p node_modules
  if [ -f .gpu/node_modules.txz ]; then
    tar -xJf .gpu/node_modules.txz -C node_modules 2>/dev/null ||
      python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1], "r:xz").extractall(sys.argv[2])' .gpu/node_modules.txz node_modules
  elif [ -f .gpu/node_modules.tgz ]; then
    tar -xzf .gpu/node_modules.tgz -C node_modules
  fi
fi
export TAILOR_LIBTORCH=${TAILOR_LIBTORCH:-python}
PY=python3
case "$TAILOR_LIBTORCH" in python:*) PY=${TAILOR_LIBTORCH#python:} ;; esac
torch_include=$("$PY" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "include"))' 2>/dev/null || true)
if [ -n "$torch_include" ] && [ ! -f "$torch_include/gloo/algorithm.h" ] && [ -z "${TAILOR_GLOO_INCLUDE:-}" ] && [ -d .gpu/gloo-include/gloo ]; then
  export TAILOR_GLOO_INCLUDE=$root/.gpu/gloo-include
fi

# Build: every source file in parallel, then link.
rm -f native/.libtorch-cache.json
build_ok=true
build_error=""
graphs_error=""
nccl_error=""
if ! cflags=$("$NODE" native/resolve-libtorch.mjs cflags 2> "$log/resolve.err"); then
  build_ok=false; build_error=$(cat "$log/resolve.err")
else
  ldflags=$("$NODE" native/resolve-libtorch.mjs libraries)
  # The addon's own defines, as native/binding.gyp sets them (test/scripts/gpu-check.test.ts keeps
  # the two alike): without NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS, a worker ended mid-decode
  # (the image-list loader's abort and error paths) aborts the whole process.
  addon_defines="-DNAPI_VERSION=8 -DNODE_ADDON_API_CPP_EXCEPTIONS -DNODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS"
  napi="-I.gpu/napi -I.gpu/node-addon-api"
  [ -d .gpu/napi ] || napi="-I/usr/include/node -I$("$NODE" -p "require('node-addon-api').include_dir")"
  mkdir -p native/build/Release "$log/obj"
  # The JPEG decoder: the system's libjpeg, else the carried one; built without it (sharp then
  # decodes image lists) where neither compiles or links.
  [ -f /usr/include/jpeglib.h ] || [ ! -d .gpu/jpeg ] || export TAILOR_JPEG_DIR=$root/.gpu/jpeg
  jpegflags=$("$NODE" native/resolve-jpeg.mjs cflags)
  jpeglibs=$("$NODE" native/resolve-jpeg.mjs libraries)
  for src in native/src/*.cc; do
    obj=$log/obj/$(basename "$src" .cc).o
    extra=""
    [ "$(basename "$src")" = jpeg.cc ] && extra=$jpegflags
    # shellcheck disable=SC2086
    g++ -c -fPIC -O2 -fexceptions -frtti -Wno-deprecated-declarations $addon_defines \
      $napi $cflags $extra "$src" -o "$obj" 2> "$obj.err" &
  done
  wait
  build_without_jpeg() {
    jpeglibs=""
    # shellcheck disable=SC2086
    g++ -c -fPIC -O2 -fexceptions -frtti $addon_defines $napi $cflags \
      native/src/jpeg.cc -o "$log/obj/jpeg.o" 2> "$log/obj/jpeg.o.err"
  }
  if [ -s "$log/obj/jpeg.o.err" ] && grep -q error "$log/obj/jpeg.o.err"; then
    mv "$log/obj/jpeg.o.err" "$log/jpeg-libjpeg.err"
    build_without_jpeg
  fi
  # The CUDA graph binding is the newest and most header-dependent part: when it alone fails,
  # it is built without the CUDA headers (graphs then report unavailable, with the reason) and
  # the error is kept for the report.
  if [ -s "$log/obj/graphs.o.err" ] && grep -q error "$log/obj/graphs.o.err"; then
    graphs_error=$(grep -m3 error "$log/obj/graphs.o.err" | tr '\n' ' ' | tr -d '"\\')
    mv "$log/obj/graphs.o.err" "$log/graphs-cuda.err"
    # shellcheck disable=SC2086
    g++ -c -fPIC -O2 -fexceptions -frtti -Wno-deprecated-declarations $addon_defines \
      $napi $cflags -UTAILOR_CUDA_HEADERS native/src/graphs.cc -o "$log/obj/graphs.o" 2> "$log/obj/graphs.o.err"
  fi
  # c10d's NCCL backend needs the most CUDA headers (ProcessGroupNCCL.hpp includes cuSPARSE,
  # cuBLASLt and cuSOLVER's): when distributed.cc fails with it, the addon is built without NCCL
  # (Gloo stays; `version --json` then says nccl: false) and the error is kept for the report.
  if [ -s "$log/obj/distributed.o.err" ] && grep -q error "$log/obj/distributed.o.err" &&
    printf '%s' "$cflags" | grep -q TAILOR_NCCL; then
    nccl_error=$(grep -m3 error "$log/obj/distributed.o.err" | tr '\n' ' ' | tr -d '"\\')
    mv "$log/obj/distributed.o.err" "$log/distributed-nccl.err"
    for src in distributed device; do
      # shellcheck disable=SC2086
      g++ -c -fPIC -O2 -fexceptions -frtti -Wno-deprecated-declarations $addon_defines \
        $napi $cflags -UUSE_C10D_NCCL -UTAILOR_NCCL native/src/$src.cc -o "$log/obj/$src.o" 2> "$log/obj/$src.o.err"
    done
  fi
  # Operator counting (a benchmark tool) does not hold the build up either: where libtorch's
  # RecordFunction API does not compile, it is built as calls that say so.
  if [ -s "$log/obj/opcount.o.err" ] && grep -q error "$log/obj/opcount.o.err"; then
    mv "$log/obj/opcount.o.err" "$log/opcount.err"
    # shellcheck disable=SC2086
    g++ -c -fPIC -O2 -fexceptions -frtti -Wno-deprecated-declarations $addon_defines \
      $napi $cflags -DTAILOR_NO_OPCOUNT native/src/opcount.cc -o "$log/obj/opcount.o" 2> "$log/obj/opcount.o.err"
  fi
  for e in "$log"/obj/*.err; do [ -s "$e" ] && grep -q "error" "$e" && { build_ok=false; build_error="$build_error $(grep -m3 error "$e" | tr '\n' ' ')"; }; done
  if $build_ok; then
    # shellcheck disable=SC2086
    link_addon() { g++ -shared -o native/build/Release/tailor_native.node "$log"/obj/*.o $ldflags $jpeglibs 2> "$log/link.err"; }
    rm -f native/build/Release/tailor_native.node
    if ! link_addon && [ -n "$jpeglibs" ]; then
      mv "$log/link.err" "$log/jpeg-link.err"
      build_without_jpeg
      link_addon
    fi
    [ -f native/build/Release/tailor_native.node ] || { build_ok=false; build_error=$(head -c 600 "$log/link.err"); }
    "$NODE" native/resolve-libtorch.mjs --json > native/build/libtorch.json
  fi
fi

run_json() { # name, seconds, command...: the command's last output line, or an error object
  name=$1; secs=$2; shift 2
  status=0
  timeout "$secs" "$@" > "$log/$name.out" 2> "$log/$name.err" || status=$?
  # GPU_CHECK_OUT=DIR keeps each check's output as soon as it ends, so that a device call cut
  # off by its time limit still returns the checks that finished.
  if [ -n "${GPU_CHECK_OUT:-}" ]; then
    mkdir -p "$GPU_CHECK_OUT" && cp "$log/$name.out" "$log/$name.err" "$GPU_CHECK_OUT/" 2> /dev/null
  fi
  if [ "$status" = 0 ]; then
    tail -n 1 "$log/$name.out"
  else
    # The first lines naming an error (not the stack frames under them, nor epoch-gpu's progress).
    printf '{"error":%s}' "$("$NODE" -e '
      const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter((l) => l.trim() && !/^\s+at /.test(l) && !l.startsWith("epoch-gpu: "));
      const named = lines.filter((l) => /error|Error|failed/.test(l));
      console.log(JSON.stringify((named.length ? named : lines).slice(0, 3).join(" | ").slice(0, 800)));' "$log/$name.err")"
  fi
}

# GPU_CHECK_BUILD_ONLY=1: build the addon and stop (scripts/gpu-suite.sh runs next).
# The parts built without their CUDA features are named (their errors carry no quotes or backslashes).
if [ -n "${GPU_CHECK_BUILD_ONLY:-}" ]; then
  if $build_ok; then
    printf '{"build":{"ok":true%s%s}}\n' "${graphs_error:+,\"graphs_error\":\"$graphs_error\"}" "${nccl_error:+,\"nccl_error\":\"$nccl_error\"}"
    exit 0
  fi
  echo "{\"build\":{\"ok\":false,\"error\":\"$build_error\"}}"; exit 1
fi
version='null'; gpu='null'; amp='null'; gloo='null'; epochgpu='null'
if $build_ok; then
  want version && version=$(run_json version 60 "$NODE" dist/src/cli/main.js version --json --check)
  want gpu && gpu=$(run_json gpu 300 "$NODE" dist/bench/gpu.js --device cuda --torch --python "$PY" --json)
  want amp_bf16 && amp=$(run_json amp 200 "$NODE" dist/bench/gpu.js --device cuda --amp bf16 --torch --python "$PY" --json)
  want gloo_cuda && gloo=$(run_json gloo 120 "$NODE" dist/src/cli/main.js launch --nproc-per-node 2 --master-port 29533 -- dist-check --device cuda:0 --size-mb 25)
  want epoch_gpu && epochgpu=$(run_json epochgpu 420 "$NODE" dist/bench/epoch-gpu.js --device cuda --torch --python "$PY" --check --json)
fi
# Python only (it needs no addon): the SADE ImageNet-LT ResNeXt-50 training rate in float32, bf16
# and bf16 + channels-last, and bf16 + channels-last against float32 from the same weights.
imgtrain='null'
want images_train_torch && imgtrain=$(run_json imgtrain 400 "$PY" bench/images_train_torch.py)
# tailor's side of it (needs the addon), at the Python script's default batch of 64 so the two
# sit side by side.
imgtrain_tailor='null'
$build_ok && want images_train_tailor && imgtrain_tailor=$(run_json imgtrain_tailor 240 "$NODE" dist/bench/images-train.js --device cuda --batch 64 --json)
# The image-list pipeline on the host's cores (no GPU involved; this is the 16-core machine).
imgpipe='null'
want images_pipeline && imgpipe=$(run_json imgpipe 400 "$NODE" dist/bench/images.js --json --workers 4,8,16 --images 6000 --repeats 1 --fresh-buffers --python "$PY")
# The same JPEGs feeding ResNeXt-50 training, both sides end to end.
imge2e='null'
$build_ok && want images_e2e && imge2e=$(run_json imge2e 500 "$NODE" dist/bench/images-e2e.js --device cuda --workers 8 --batch 64 --images 6000 --epochs 2 --python "$PY" --json)
"$NODE" -e '
const [ok, err, graphsErr, ncclErr, ...parts] = process.argv.slice(1);
const parse = (s) => { try { return JSON.parse(s); } catch { return { unparsed: s }; } };
const [version, gpu, amp, gloo, imgtrain, epochgpu, imgtrainTailor, imgpipe, imge2e] = parts.map(parse);
console.log(JSON.stringify({ build: { ok: ok === "true", error: err || undefined, libtorch: process.env.TAILOR_LIBTORCH }, graphs_build: graphsErr || undefined, nccl_build: ncclErr || undefined, version, gpu, amp_bf16: amp, gloo_cuda: gloo, images_train_torch: imgtrain, epoch_gpu: epochgpu, images_train_tailor: imgtrainTailor, images_pipeline: imgpipe, images_e2e: imge2e }));
' "$build_ok" "$build_error" "$graphs_error" "$nccl_error" "$version" "$gpu" "$amp" "$gloo" "$imgtrain" "$epochgpu" "$imgtrain_tailor" "$imgpipe" "$imge2e"
