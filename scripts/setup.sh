#!/bin/sh
# Idempotent set-up of a fresh Debian machine with Node 20: system packages (libtorch and
# friends, the Fashion-MNIST data set), npm dependencies, the native addon, the TypeScript build.
set -eu
cd "$(dirname "$0")/.."

APT_PACKAGES="libtorch-dev libjemalloc2 python3-torch python3-sklearn python3-numpy dataset-fashion-mnist chromium g++ make python3"
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
  npm ci --no-audit --no-fund
fi

if [ ! -f native/build/Release/tailor_native.node ] || [ -n "$(find native/src native/binding.gyp -newer native/build/Release/tailor_native.node 2>/dev/null | head -1)" ]; then
  echo "setup: building the native addon (libtorch)"
  npx node-gyp rebuild --directory native --nodedir=/usr
fi

echo "setup: compiling TypeScript"
node node_modules/typescript/bin/tsc -p tsconfig.json
echo "setup: done"
