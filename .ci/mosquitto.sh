#!/usr/bin/env bash
# Ensures a Mosquitto broker listens on 127.0.0.1:1883 for the door-path tests.
# Idempotent: does nothing when something already answers there; installs mosquitto with apt-get
# when the binary is absent; starts it as a daemon with the system configuration.
set -euo pipefail

HOST=127.0.0.1
PORT=1883
CONF=/etc/mosquitto/mosquitto.conf

listening() { (exec 3<>"/dev/tcp/$HOST/$PORT") 2>/dev/null; }

if listening; then
  echo "mosquitto: already listening on $HOST:$PORT"
  exit 0
fi

SUDO=""
[[ $(id -u) -eq 0 ]] || SUDO="sudo"

if ! command -v mosquitto >/dev/null 2>&1 && [[ ! -x /usr/sbin/mosquitto ]]; then
  echo "mosquitto: installing with apt-get"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq mosquitto mosquitto-clients
fi
MOSQUITTO=$(command -v mosquitto || echo /usr/sbin/mosquitto)

if [[ -f $CONF ]]; then
  # The Debian package's config has no listener: anonymous access on a loopback listener is
  # what the tests use. Add it in a conf.d file rather than editing the packaged file.
  if ! grep -Eq "^\s*listener\s+$PORT" "$CONF" /etc/mosquitto/conf.d/*.conf 2>/dev/null; then
    $SUDO mkdir -p /etc/mosquitto/conf.d
    printf 'listener %s %s\nallow_anonymous true\n' "$PORT" "$HOST" | $SUDO tee /etc/mosquitto/conf.d/guestpass-ci.conf >/dev/null
  fi
  # The packaged config writes its pid and persistence files into these folders.
  $SUDO mkdir -p /run/mosquitto /var/lib/mosquitto /var/log/mosquitto
  if id mosquitto >/dev/null 2>&1; then
    $SUDO chown mosquitto: /run/mosquitto /var/lib/mosquitto /var/log/mosquitto
  fi
  echo "mosquitto: starting with $CONF"
  $SUDO "$MOSQUITTO" -d -c "$CONF"
else
  echo "mosquitto: starting on $HOST:$PORT without a config file"
  $SUDO "$MOSQUITTO" -d -p "$PORT"
fi

for _ in $(seq 1 40); do
  if listening; then
    echo "mosquitto: listening on $HOST:$PORT"
    exit 0
  fi
  sleep 0.25
done
echo "mosquitto: not listening on $HOST:$PORT after 10s" >&2
exit 1
