#!/bin/sh
# Idempotent set-up of a fresh Debian machine with Node 20: system packages (libtorch and
# friends, the Fashion-MNIST data set), npm dependencies, the native addon, the TypeScript build.
# TAILOR_LIBTORCH selects the libtorch the addon builds against (see native/resolve-libtorch.mjs):
# unset or `system` is Debian's libtorch-dev; `python[:/path/to/python3]` or a directory use
# another one, and then libtorch-dev is not installed.
set -eu
cd "$(dirname "$0")/.."

# libgloo-dev: the Gloo headers for libtorch's c10d process groups (data-parallel training);
# libjpeg62-turbo-dev: the addon's JPEG decoder for image lists (native/resolve-jpeg.mjs);
# python3-torchvision (0.14, matching python3-torch 1.13): the transforms of the image-list
# benchmarks' PyTorch side (bench/images_torch.py).
APT_PACKAGES="libgloo-dev libjpeg62-turbo-dev libjemalloc2 python3-torch python3-torchvision python3-sklearn python3-numpy dataset-fashion-mnist chromium g++ make python3"
case "${TAILOR_LIBTORCH:-system}" in
  system) APT_PACKAGES="libtorch-dev $APT_PACKAGES" ;;
esac
missing=""
for p in $APT_PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "setup: installing Debian packages:$missing"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q $missing
fi

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing npm dependencies"
  # onnxruntime-node (ONNX export's parity tests) bundles its CPU runtime; its install script
  # would also fetch optional CUDA binaries from nuget.org, which is neither needed nor reachable
  # where only the npm registry is.
  ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund
fi

# The resolution (paths, version, ABI) is recorded beside the build: a different selection, or a
# changed libtorch behind the same selection, rebuilds the addon.
rm -f native/.libtorch-cache.json
resolved=$(node native/resolve-libtorch.mjs --json)
recorded=$(cat native/build/libtorch.json 2>/dev/null || true)
if [ ! -f native/build/Release/tailor_native.node ] || [ "$resolved" != "$recorded" ] || [ -n "$(find native/src native/binding.gyp native/resolve-libtorch.mjs native/resolve-jpeg.mjs -newer native/build/Release/tailor_native.node 2>/dev/null | head -1)" ]; then
  echo "setup: building the native addon (libtorch: ${TAILOR_LIBTORCH:-system})"
  rm -f native/build/libtorch.json
  # One g++ per core where the memory allows it (native/build-jobs.mjs).
  npx node-gyp rebuild --directory native --nodedir=/usr --jobs "$(node native/build-jobs.mjs)"
  printf '%s\n' "$resolved" > native/build/libtorch.json.tmp
  mv native/build/libtorch.json.tmp native/build/libtorch.json
fi

echo "setup: compiling TypeScript"
node node_modules/typescript/bin/tsc -p tsconfig.json
echo "setup: done"
