#!/bin/sh
# The test command of the README: set up (idempotent), then lint, build the API reference (a
# missing doc comment on an export fails it) and run every test (the API report is one).
set -eu
cd "$(dirname "$0")/.."
./scripts/setup.sh
npx eslint .
npx prettier --check .
npx typedoc
node scripts/run-tests.mjs "$@"
