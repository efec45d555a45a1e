// The door path's metrics: how far the door-gateway is behind the pass bus, and how long a
// revocation takes from its event to each door controller's acknowledgement. Also what /readyz
// asks of the gateway (its MQTT links up).
import { Gauge, Histogram } from 'prom-client';
import { metricsRegistry, onScrape } from '../shared/metrics/registry.js';
import type { ReadinessCheck } from '../shared/http/readiness.js';
import type { AckObservation, DoorGateway } from './door-gateway.js';

const gatewayLag = new Gauge({
  name: 'guestpass_door_gateway_lag_seconds',
  help: 'Age of the oldest pass event the door-gateway is still handling (since the pass bus accepted it); 0 when it is caught up.',
  registers: [metricsRegistry],
});

const revocationAck = new Histogram({
  name: 'guestpass_revocation_door_ack_seconds',
  help: "Time from a revocation (or check-out) event's recording to a door controller's acknowledgement of the removal.",
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  registers: [metricsRegistry],
});

const active = new Gauge({
  name: 'guestpass_door_gateway_active',
  help: 'Whether this door-gateway is the active one (1) or a standby waiting for its turn (0); the deployment needs exactly one 1.',
  registers: [metricsRegistry],
});

/** Records the gateway's metrics until the returned function is called. */
export function observeDoorGateway(gateway: DoorGateway): () => void {
  active.set(1);
  const onAck = (ack: AckObservation) => {
    if (ack.op === 'remove' && ack.reason === 'revoked' && ack.latencyMs !== null) revocationAck.observe(Math.max(0, ack.latencyMs) / 1000);
  };
  gateway.on('ack', onAck);
  const stopScraping = onScrape(async () => gatewayLag.set(gateway.lagMs() / 1000));
  return () => {
    gateway.off('ack', onAck);
    stopScraping();
    gatewayLag.set(0);
    active.set(0);
  };
}

/**
 * The gateway's MQTT links (credentials out, acknowledgements in) are connected. `gateway` may
 * be a getter of the running one: null is a standby (door-gateway/gateway-role.ts), not ready.
 */
export function mqttCheck(gateway: DoorGateway | (() => DoorGateway | null)): ReadinessCheck {
  const current = typeof gateway === 'function' ? gateway : () => gateway;
  return {
    name: 'mqtt',
    check: async () => {
      const running = current();
      if (!running) throw new Error('a standby: another door-gateway is the active one, or this one is taking over');
      if (!running.mqttConnected) throw new Error('the MQTT broker is not connected');
    },
  };
}
