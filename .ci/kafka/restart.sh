#!/usr/bin/env bash
# Restarts the CI broker keeping its data (topics, committed offsets): used by the door-path
# recovery test (test/door/recovery.e2e.spec.ts) and by hand.
set -euo pipefail
cd "$(dirname "$0")"
./stop.sh
./start.sh
