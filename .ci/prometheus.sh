#!/usr/bin/env bash
# Ensures Debian's promtool (package `prometheus`) is installed for the alert-rule tests
# (test/ops/alert-rules.int.spec.ts: `promtool check rules` and `promtool test rules` over
# deploy/prometheus/). Idempotent; prints the path of the binary (.ci/run exports it as
# PROMTOOL_PATH). The package's own Prometheus service is stopped and disabled: only the tool is used.
set -euo pipefail

binary() { command -v promtool 2>/dev/null || { [[ -x /usr/bin/promtool ]] && echo /usr/bin/promtool; }; }

if [[ -z $(binary) ]]; then
  SUDO=""
  [[ $(id -u) -eq 0 ]] || SUDO="sudo"
  echo "prometheus: installing Debian's prometheus package (for promtool) with apt-get" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends prometheus >/dev/null
  if command -v systemctl >/dev/null 2>&1 && systemctl is-enabled prometheus >/dev/null 2>&1; then
    $SUDO systemctl disable --now prometheus >/dev/null 2>&1 || true
  fi
fi
path=$(binary)
[[ -n $path ]] || { echo "prometheus: promtool not found after installing" >&2; exit 1; }
"$path" --version >/dev/null 2>&1 || { echo "prometheus: $path does not run" >&2; exit 1; }
echo "$path"
