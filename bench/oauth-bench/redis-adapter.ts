// oidc-provider's storage adapter over Redis, written to its documented adapter interface
// (oidc-provider docs, "Adapter": upsert, find, findByUid, findByUserCode, consume, destroy,
// revokeByGrantId) as its own example adapter (example/adapters/redis.js) keeps things: one key per
// model instance `{model}:{id}` expiring with it, consumable models as hashes so that consume()
// sets one field, and a list per grant of the keys to delete when the grant is revoked.
// The bench's durable peer runs it against a private redis-server with `appendfsync always`, so
// every write is on disk before it is acknowledged, as our event store's appends are.
import type { Redis } from 'ioredis';

const GRANTABLE = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);
const CONSUMABLE = new Set(['AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);

type Payload = Record<string, unknown> & { grantId?: string; userCode?: string; uid?: string };

const grantKeyFor = (id: string) => `grant:${id}`;
const userCodeKeyFor = (userCode: string) => `userCode:${userCode}`;
const uidKeyFor = (uid: string) => `uid:${uid}`;

/** `adapter: redisAdapterFactory(client)` in the Provider's configuration. */
export function redisAdapterFactory(client: Redis): (model: string) => RedisAdapter {
  return (model) => new RedisAdapter(model, client);
}

export class RedisAdapter {
  constructor(
    private readonly name: string,
    private readonly client: Redis,
  ) {}

  private key(id: string): string {
    return `${this.name}:${id}`;
  }

  async upsert(id: string, payload: Payload, expiresIn?: number): Promise<void> {
    const key = this.key(id);
    const multi = this.client.multi();
    if (CONSUMABLE.has(this.name)) multi.hset(key, { payload: JSON.stringify(payload) });
    else multi.set(key, JSON.stringify(payload));
    if (expiresIn) multi.expire(key, expiresIn);
    if (GRANTABLE.has(this.name) && payload.grantId) {
      const grantKey = grantKeyFor(payload.grantId);
      multi.rpush(grantKey, key);
      // The grant's list lives as long as its longest-lived entry.
      const ttl = await this.client.ttl(grantKey);
      if (expiresIn && expiresIn > ttl) multi.expire(grantKey, expiresIn);
    }
    if (payload.userCode) {
      multi.set(userCodeKeyFor(payload.userCode), id);
      if (expiresIn) multi.expire(userCodeKeyFor(payload.userCode), expiresIn);
    }
    if (payload.uid) {
      multi.set(uidKeyFor(payload.uid), id);
      if (expiresIn) multi.expire(uidKeyFor(payload.uid), expiresIn);
    }
    await multi.exec();
  }

  async find(id: string): Promise<Payload | undefined> {
    if (CONSUMABLE.has(this.name)) {
      const { payload, ...rest } = await this.client.hgetall(this.key(id));
      if (payload === undefined) return undefined;
      // `consumed` (set by consume()) comes back as text: oidc-provider only asks whether it is there.
      return { ...rest, ...(JSON.parse(payload) as Payload) };
    }
    const data = await this.client.get(this.key(id));
    return data === null ? undefined : (JSON.parse(data) as Payload);
  }

  async findByUid(uid: string): Promise<Payload | undefined> {
    const id = await this.client.get(uidKeyFor(uid));
    return id === null ? undefined : this.find(id);
  }

  async findByUserCode(userCode: string): Promise<Payload | undefined> {
    const id = await this.client.get(userCodeKeyFor(userCode));
    return id === null ? undefined : this.find(id);
  }

  async consume(id: string): Promise<void> {
    await this.client.hset(this.key(id), 'consumed', Math.floor(Date.now() / 1000));
  }

  async destroy(id: string): Promise<void> {
    await this.client.del(this.key(id));
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    const grantKey = grantKeyFor(grantId);
    const keys = await this.client.lrange(grantKey, 0, -1);
    const multi = this.client.multi();
    for (const key of keys) multi.del(key);
    multi.del(grantKey);
    await multi.exec();
  }
}
