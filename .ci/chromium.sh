#!/usr/bin/env bash
# Ensures Debian's chromium is installed for the browser test of the sign-in pages (driven by
# playwright-core with executablePath). Idempotent; prints the path of the binary.
set -euo pipefail

if ! command -v chromium >/dev/null 2>&1; then
  SUDO=""
  [[ $(id -u) -eq 0 ]] || SUDO="sudo"
  echo "chromium: installing with apt-get" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi
command -v chromium
