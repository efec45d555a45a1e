#!/bin/sh
# Renders the gateway's nginx configuration (deploy/gateway.nginx.conf) from the environment:
#   sh deploy/render-gateway.sh deploy/gateway.nginx.conf > /etc/nginx/conf.d/default.conf
#
#   GATEWAY_COMMAND_UPSTREAMS  required: host:port of each command-service instance (space- or comma-separated)
#   GATEWAY_QUERY_UPSTREAMS    required: host:port of each query-service instance
#   GATEWAY_LISTEN             nginx listen address of the https port (default 8443; e.g. 127.0.0.1:8443)
#   GATEWAY_TLS_DIR            folder holding gateway.crt (chain) and gateway.key (default /etc/nginx/tls)
#   GATEWAY_TRUSTED_PROXIES    addresses or CIDRs of the load balancers / TLS terminators in front
#                              of the gateway whose X-Forwarded-For is believed (default: none)
# POSIX sh and awk only: it runs in the nginx image (docker-compose.yml) and in the tests.
set -eu

template=${1:?usage: render-gateway.sh TEMPLATE}
[ -r "$template" ] || { echo "render-gateway: cannot read $template" >&2; exit 1; }

fail() {
  echo "render-gateway: $*" >&2
  exit 1
}

# "a b,c" -> one word per line; refuses anything that could end a directive or start another.
words() {
  printf '%s\n' "$2" | tr ', ' '\n\n' | sed '/^$/d' | while IFS= read -r word; do
    printf '%s\n' "$word" | grep -Eq "$3" || fail "$1: \"$word\" is not an accepted value"
    printf '%s\n' "$word"
  done
}

# One directive per word, on lines of their own (indented like the template's placeholders).
directives() {
  printf '%s\n' "$1" | sed '/^$/d' | awk -v d="$2" -v p="$3" 'NR > 1 { printf "\n  " } { printf "%s %s%s;", d, $0, p }'
}

[ -n "${GATEWAY_COMMAND_UPSTREAMS:-}" ] || fail "GATEWAY_COMMAND_UPSTREAMS is required (host:port of each command-service instance)"
[ -n "${GATEWAY_QUERY_UPSTREAMS:-}" ] || fail "GATEWAY_QUERY_UPSTREAMS is required (host:port of each query-service instance)"

UPSTREAM='^([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):[0-9]{1,5}$'
PROXY='^[0-9A-Fa-f.:]+(/[0-9]{1,3})?$'
command_words=$(words GATEWAY_COMMAND_UPSTREAMS "$GATEWAY_COMMAND_UPSTREAMS" "$UPSTREAM")
query_words=$(words GATEWAY_QUERY_UPSTREAMS "$GATEWAY_QUERY_UPSTREAMS" "$UPSTREAM")
proxy_words=$(words GATEWAY_TRUSTED_PROXIES "${GATEWAY_TRUSTED_PROXIES:-}" "$PROXY")

listen=${GATEWAY_LISTEN:-8443}
printf '%s\n' "$listen" | grep -Eq '^(([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):)?[0-9]{1,5}$' || fail "GATEWAY_LISTEN: \"$listen\" is not [address:]port"
tls_dir=${GATEWAY_TLS_DIR:-/etc/nginx/tls}
printf '%s\n' "$tls_dir" | grep -Eq '^/[A-Za-z0-9._/-]*$' || fail "GATEWAY_TLS_DIR: \"$tls_dir\" is not an absolute path of plain characters"

# A passive health check: an instance that refused a connection (or answered 503) is left out
# for 1 s (counted in whole seconds: at most 2 s), no longer: in a rolling restart the instance
# that came back must be chosen again before the next one stops (nginx tries two entries: the
# stopped one and, were the other still left out, the stopped one's backup entry: a 502).
# The same instances again as backups that are never left out: when every instance is
# left out (a part they all need is down, so each answered 503), nginx asks them anyway and the
# client gets their 503 with Retry-After instead of nginx's own 502 ("no live upstreams").
servers() {
  printf '%s\n  %s' "$(directives "$1" server ' max_fails=1 fail_timeout=1s')" "$(directives "$1" server ' backup max_fails=0')"
}
command_servers=$(servers "$command_words")
query_servers=$(servers "$query_words")
if [ -n "$proxy_words" ]; then
  real_ip_from=$(directives "$proxy_words" set_real_ip_from '')
else
  real_ip_from='# GATEWAY_TRUSTED_PROXIES is empty: no X-Forwarded-For is believed.'
fi

GW_LISTEN=$listen GW_TLS_DIR=$tls_dir GW_COMMAND=$command_servers GW_QUERY=$query_servers GW_REAL_IP=$real_ip_from \
  awk '
    {
      line = $0
      gsub(/\$\{GATEWAY_LISTEN\}/, ENVIRON["GW_LISTEN"], line)
      gsub(/\$\{GATEWAY_TLS_DIR\}/, ENVIRON["GW_TLS_DIR"], line)
      gsub(/\$\{GATEWAY_COMMAND_SERVERS\}/, ENVIRON["GW_COMMAND"], line)
      gsub(/\$\{GATEWAY_QUERY_SERVERS\}/, ENVIRON["GW_QUERY"], line)
      gsub(/\$\{GATEWAY_REAL_IP_FROM\}/, ENVIRON["GW_REAL_IP"], line)
      if (line ~ /\$\{GATEWAY_/) { print "render-gateway: unknown placeholder in line " NR ": " $0 > "/dev/stderr"; exit 1 }
      print line
    }
  ' "$template"
