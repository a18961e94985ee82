#!/bin/sh
# The test command of the README: set up (idempotent), then lint and run every test.
set -eu
cd "$(dirname "$0")/.."
./scripts/setup.sh
npx eslint .
npx prettier --check .
node scripts/run-tests.mjs "$@"
