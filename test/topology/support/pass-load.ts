// A steady load on the organization pass API through the gateway: each virtual client (its own
// admin's API key, its own source address carried in X-Forwarded-For from the trusted
// terminator) creates passes, revokes some of those it created and reads the listing, one
// request at a time with a pause between. Every answer is recorded, so a test can hold the
// service to what it acknowledged: a 201 create exists, a 200 revoke took effect.
import type { GatewayClient } from './gateway-client.js';
import { sleep } from './service-process.js';

export interface VirtualClient {
  readonly apiKey: string;
  /** The client's address as the terminator reports it. */
  readonly address: string;
  /** Facilities its passes are for (round robin). */
  readonly facilityIds: readonly number[];
}

export interface CreateOutcome {
  readonly status: number;
  readonly publicId: string | null;
  readonly facilityId: number;
  readonly at: number;
}

export interface RevokeOutcome {
  readonly status: number;
  readonly publicId: string;
  readonly at: number;
}

export interface LoadOptions {
  /** Pause between one client's requests (default 150 ms, jittered by half). */
  readonly pauseMs?: number;
  /** Share of requests that are creates, revokes (the rest are listings). */
  readonly createShare?: number;
  readonly revokeShare?: number;
  /** The passes' window: arrival date (UTC) and the last day. */
  readonly arrivalDate: string;
  readonly accessUntil: string;
}

export class PassLoad {
  readonly creates: CreateOutcome[] = [];
  readonly revokes: RevokeOutcome[] = [];
  readonly reads: Array<{ status: number; at: number }> = [];
  /** Bodies of answers that were neither 2xx nor an expected refusal, for the report. */
  readonly oddities: string[] = [];
  private running = false;
  private loops: Promise<void>[] = [];
  private readonly started = Date.now();

  constructor(
    private readonly gateway: GatewayClient,
    private readonly clients: readonly VirtualClient[],
    private readonly options: LoadOptions,
  ) {}

  start(): void {
    this.running = true;
    this.loops = this.clients.map((c, i) => this.loop(c, i));
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  /** Status counts per operation, e.g. `{ create: { 201: 120, 502: 1 }, ... }`. */
  histogram(): Record<'create' | 'revoke' | 'read', Record<number, number>> {
    const h = (xs: ReadonlyArray<{ status: number }>) => xs.reduce<Record<number, number>>((m, x) => ({ ...m, [x.status]: (m[x.status] ?? 0) + 1 }), {});
    return { create: h(this.creates), revoke: h(this.revokes), read: h(this.reads) };
  }

  /** Creates with a 201 since `since` (ms epoch). */
  createdSince(since: number): number {
    return this.creates.filter((c) => c.status === 201 && c.at >= since).length;
  }

  private async loop(client: VirtualClient, index: number): Promise<void> {
    const mine: string[] = [];
    const pause = this.options.pauseMs ?? 150;
    const createShare = this.options.createShare ?? 0.5;
    const revokeShare = this.options.revokeShare ?? 0.2;
    let n = 0;
    await sleep(index * (pause / this.clients.length)); // spread the clients over the pause
    while (this.running) {
      const dice = Math.random();
      if (dice < createShare || mine.length === 0) {
        const facilityId = client.facilityIds[n++ % client.facilityIds.length]!;
        const res = await this.gateway.call('POST', '/api/v1/org/passes', {
          apiKey: client.apiKey,
          forwardedFor: client.address,
          json: {
            first_name: `Guest ${index}-${n}`,
            email: `guest-${index}-${n}@example.com`,
            arrival_date: this.options.arrivalDate,
            access_until: this.options.accessUntil,
            facility_id: facilityId,
          },
        });
        const publicId = res.status === 201 ? String(res.body.public_id) : null;
        if (publicId) mine.push(publicId);
        this.creates.push({ status: res.status, publicId, facilityId, at: Date.now() });
        this.note('POST', res);
      } else if (dice < createShare + revokeShare) {
        const publicId = mine.splice(Math.floor(Math.random() * mine.length), 1)[0]!;
        const res = await this.gateway.call('DELETE', `/api/v1/org/passes/${publicId}`, { apiKey: client.apiKey, forwardedFor: client.address });
        this.revokes.push({ status: res.status, publicId, at: Date.now() });
        this.note('DELETE', res);
      } else {
        const res = await this.gateway.call('GET', '/api/v1/org/passes?limit=20', { apiKey: client.apiKey, forwardedFor: client.address });
        this.reads.push({ status: res.status, at: Date.now() });
        this.note('GET', res);
      }
      await sleep(pause / 2 + Math.random() * pause);
    }
  }

  private note(method: string, res: { status: number; text: string }): void {
    if (res.status >= 200 && res.status < 300) return;
    const t = ((Date.now() - this.started) / 1000).toFixed(1);
    if (this.oddities.length < 50) this.oddities.push(`+${t}s ${method} ${res.status} ${res.text.slice(0, 200).replace(/\s+/g, ' ')}`);
  }
}
