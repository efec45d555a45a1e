#!/usr/bin/env bash
# Ensures Debian's nginx (and openssl, which makes the test's certificate) is installed for the
# production-topology test and bench/gateway.ts, which run it with the project's own gateway
# configuration (deploy/gateway.nginx.conf) in a folder of their own. Idempotent; prints the path
# of the binary (.ci/run exports it as NGINX_PATH). The package's own service is not used.
set -euo pipefail

binary() { command -v nginx 2>/dev/null || { [[ -x /usr/sbin/nginx ]] && echo /usr/sbin/nginx; }; }

if [[ -z $(binary) ]] || ! command -v openssl >/dev/null 2>&1; then
  SUDO=""
  [[ $(id -u) -eq 0 ]] || SUDO="sudo"
  echo "nginx: installing nginx and openssl with apt-get" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nginx openssl >/dev/null
fi
path=$(binary)
[[ -n $path ]] || { echo "nginx: not found after installing" >&2; exit 1; }
"$path" -V 2>&1 | grep -q -- '--with-http_realip_module' || { echo "nginx: $path lacks the realip module the gateway uses" >&2; exit 1; }
echo "$path"
