#!/usr/bin/env bash
# Every script under bench/ for a second or two with small data, so that none can rot unnoticed:
# each must exit 0, which each does only when every answer it got was correct (a bench exits
# non-zero on a wrong answer or a phase that cannot run, never on a missed speed target). The
# figures printed here are not measurements (a CI machine, tiny runs): docs/capacity.md has those.
# A bench that needs a peer or a broker starts it as its full run does (the CI brokers, Kafka and
# Mosquitto, are started by .ci/run; nginx is NGINX_PATH). The library modules under bench/
# (command-line-options, percentile, cpu-profile, ...) are run through the scripts that use them.
# Usage: bash .ci/bench-smoke.sh   (DATABASE_URL: a PostgreSQL server, else the embedded one)
set -euo pipefail
cd "$(dirname "$0")/.."

started=$(date +%s)
profiles=$(mktemp -d)
trap 'rm -rf "$profiles"' EXIT

bench() {
  local t0; t0=$(date +%s)
  echo "::: bench $*"
  # A bench that hangs fails CI instead of holding it.
  timeout --kill-after=10 300 npx tsx "$@"
  echo "::: bench $1: exit 0 in $(( $(date +%s) - t0 )) s"
}

bench bench/oauth-vs-oidc-provider.ts --seconds 1 --warmup 1 --concurrency 4
bench bench/rate-limit-store.ts --takes 200 --seconds 1 --concurrency 4
bench bench/http-create-pass.ts --seconds 1 --warmup 0.5 --concurrency 2 --cpu-profile "$profiles"
bench bench/cpu-profile-summary.ts "$(ls "$profiles"/*.cpuprofile | head -n 1)" --top 5
bench bench/pass-page.ts --seconds 1 --warmup 0.5 --concurrency 2
bench bench/list-passes.ts --passes 12000 --requests 5
bench bench/member-directory.ts --members 2000 --requests 5
bench bench/console.ts --smoke
bench bench/member-import.ts --rows 500
bench bench/projection-rebuild.ts --events 2000
bench bench/token-revocation-lag.ts --runs 10
BENCH_APPENDS=200 BENCH_RUN_SECONDS=1 bench bench/event-append.ts
bench bench/door-resync.ts --credentials 100 --rounds 1
bench bench/door-revocation.ts --facilities 2 --passes 100 --rate 20 --seconds 1 --controllers 1
bench bench/gateway.ts --seconds 1 --warmup 0.5 --concurrency 2 --samples 20
bench bench/audit.ts --smoke   # runs bench/audit-verify-child.ts as its verifier process
bench bench/door-kafka-restarts.ts --smoke

# Every script is above: a new bench that is not fails here until it is added.
listed=$(grep -o 'bench/[a-z0-9-]*\.ts' "$0" | sort -u)
for script in $(grep -L -E '^export (async )?function|^export (const|interface|type|class)' bench/*.ts); do
  grep -qx "$script" <<<"$listed" || { echo "::: $script is not in .ci/bench-smoke.sh"; exit 1; }
done
echo "::: benches: all exited 0 in $(( $(date +%s) - started )) s"
