#!/usr/bin/env bash
# Starts a single-node Apache Kafka 3.9.1 (KRaft, broker + controller) on 127.0.0.1:9092 for CI.
# Idempotent: does nothing when the broker started by this script is already running and ready.
#   .ci/kafka/start.sh          fetch jars if missing, format storage once, start, wait until ready
# Environment: KAFKA_START_TIMEOUT (seconds, default 90), KAFKA_HEAP_OPTS (default -Xms256m -Xmx768m).
set -euo pipefail
cd "$(dirname "$0")"

PID_FILE=data/kafka.pid
LOG_FILE=data/kafka.log
TIMEOUT="${KAFKA_START_TIMEOUT:-90}"

port_open() { (exec 3<>/dev/tcp/127.0.0.1/9092) 2>/dev/null; }
running() { [[ -f $PID_FILE ]] && kill -0 "$(cat "$PID_FILE")" 2>/dev/null; }

mkdir -p data

if running && port_open; then
  echo "kafka: already running (pid $(cat "$PID_FILE")) on 127.0.0.1:9092"
  exit 0
fi
if ! running && port_open; then
  echo "kafka: 127.0.0.1:9092 is taken by a process this script did not start; refusing to start a second broker" >&2
  exit 1
fi

# 1. Jars (first run downloads ~46 MB from Maven Central).
if ! compgen -G 'lib/kafka_2.13-3.9.1.jar' >/dev/null || ! compgen -G 'lib/slf4j-simple-*.jar' >/dev/null; then
  echo "kafka: fetching org.apache.kafka:kafka_2.13:3.9.1 with Maven"
  mvn -q -B dependency:copy-dependencies -DoutputDirectory=lib
fi

JAVA_OPTS=(
  ${KAFKA_HEAP_OPTS:--Xms256m -Xmx768m}
  -XX:+UseG1GC
  -Djava.awt.headless=true
  -Dorg.slf4j.simpleLogger.defaultLogLevel=info
  -Dorg.slf4j.simpleLogger.showDateTime=true
  -Dorg.slf4j.simpleLogger.log.org.apache.kafka.clients=warn
)

# 2. KRaft storage: formatted once; the cluster id is kept so restarts reuse the same log dirs.
if [[ ! -f data/kraft-combined-logs/meta.properties ]]; then
  [[ -f data/cluster-id ]] || java -cp 'lib/*' kafka.tools.StorageTool random-uuid 2>>"$LOG_FILE" > data/cluster-id
  echo "kafka: formatting KRaft storage (cluster $(cat data/cluster-id))"
  java "${JAVA_OPTS[@]}" -cp 'lib/*' kafka.tools.StorageTool format \
    -t "$(cat data/cluster-id)" -c server.properties --ignore-formatted >>"$LOG_FILE" 2>&1
fi

# 3. Start in the background, detached from this shell's session so CI steps can end.
echo "kafka: starting (log: .ci/kafka/$LOG_FILE)"
[[ -f $LOG_FILE ]] && mv -f "$LOG_FILE" "$LOG_FILE.1"
nohup setsid java "${JAVA_OPTS[@]}" -cp 'lib/*' kafka.Kafka server.properties >>"$LOG_FILE" 2>&1 </dev/null &
echo $! >"$PID_FILE"

# 4. Ready = the broker logged its start and accepts connections (bounded wait).
for ((i = 0; i < TIMEOUT * 4; i++)); do
  if ! running; then
    echo "kafka: process exited during start; last log lines:" >&2
    tail -n 40 "$LOG_FILE" >&2
    rm -f "$PID_FILE"
    exit 1
  fi
  if grep -q 'Kafka Server started' "$LOG_FILE" && port_open; then
    echo "kafka: ready on 127.0.0.1:9092 (pid $(cat "$PID_FILE"))"
    exit 0
  fi
  sleep 0.25
done
echo "kafka: not ready after ${TIMEOUT}s; last log lines:" >&2
tail -n 40 "$LOG_FILE" >&2
exit 1
