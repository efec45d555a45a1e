#!/bin/sh
# Writes a self-signed certificate for the gateway into DIR (default deploy/tls): gateway.crt and
# gateway.key (P-256, valid for localhost and 127.0.0.1 and any extra names given). For local
# runs and the tests only; production mounts a certificate from a real CA in the same two files.
#   sh deploy/self-signed-certificate.sh [DIR] [NAME]...     e.g. ... deploy/tls gate.example.test
set -eu

dir=${1:-$(dirname "$0")/tls}
[ $# -gt 0 ] && shift
san="DNS:localhost,IP:127.0.0.1,IP:::1"
for name in "$@"; do
  case $name in
    *[!A-Za-z0-9.:-]*) echo "self-signed-certificate: \"$name\" is not a host name or address" >&2; exit 1 ;;
    *[!0-9.]* | '') case $name in *:*) san="$san,IP:$name" ;; *) san="$san,DNS:$name" ;; esac ;;
    *) san="$san,IP:$name" ;;
  esac
done

mkdir -p "$dir"
umask 077
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -sha256 -days 825 \
  -subj "/CN=guestpass gateway (self-signed)" \
  -addext "subjectAltName=$san" \
  -addext "basicConstraints=critical,CA:TRUE,pathlen:0" \
  -addext "keyUsage=critical,digitalSignature,keyCertSign" \
  -addext "extendedKeyUsage=serverAuth" \
  -keyout "$dir/gateway.key" -out "$dir/gateway.crt" 2>/dev/null
chmod 644 "$dir/gateway.crt"
echo "$dir/gateway.crt ($san)"
