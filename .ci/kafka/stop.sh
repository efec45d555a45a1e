#!/usr/bin/env bash
# Stops the Kafka broker started by start.sh (only that process, by its pid file). Idempotent.
# Graceful (SIGTERM, controlled shutdown) first; SIGKILL after KAFKA_STOP_TIMEOUT seconds (default 30).
set -euo pipefail
cd "$(dirname "$0")"
PID_FILE=data/kafka.pid
TIMEOUT="${KAFKA_STOP_TIMEOUT:-30}"

if [[ ! -f $PID_FILE ]]; then
  echo "kafka: not running (no pid file)"
  exit 0
fi
pid=$(cat "$PID_FILE")
if ! kill -0 "$pid" 2>/dev/null; then
  echo "kafka: not running (stale pid $pid)"
  rm -f "$PID_FILE"
  exit 0
fi
kill -TERM "$pid"
for ((i = 0; i < TIMEOUT * 4; i++)); do
  if ! kill -0 "$pid" 2>/dev/null; then
    rm -f "$PID_FILE"
    echo "kafka: stopped"
    exit 0
  fi
  sleep 0.25
done
echo "kafka: still running after ${TIMEOUT}s, killing" >&2
kill -KILL "$pid" 2>/dev/null || true
rm -f "$PID_FILE"
