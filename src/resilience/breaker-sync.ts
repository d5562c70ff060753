import type { Redis } from 'ioredis';
import { connectRedis, redisClientOptions } from '../state/redis.js';
import type { Registry } from '../tools/registry.js';
import { newId } from '../util/ids.js';
import type { BreakerTransition, HealthBook } from './health.js';

export const BREAKER_CHANNEL = 'toolgate:breaker';

interface Message {
  origin: string;
  tool: string;
  backend: string;
  hash: string;
  state: 'open' | 'closed';
}

function parse(raw: string): Message | undefined {
  try {
    const m = JSON.parse(raw) as Partial<Message>;
    const strings = [m.origin, m.tool, m.backend, m.hash].every((v) => typeof v === 'string');
    return strings && (m.state === 'open' || m.state === 'closed') ? (m as Message) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Breakers across replicas: a local open or close is published on `toolgate:breaker`, and the
 * others follow it (HealthBook.force), so one replica's failures stop every replica's traffic to
 * that backend. Best effort by design: with Redis down nothing is published or heard, and each
 * replica's own breakers go on working alone.
 */
export class BreakerSync {
  private readonly origin = newId('r');
  private readonly pub: Promise<Redis>;
  private readonly sub: Promise<Redis>;
  private readonly unsubscribe: () => void;

  constructor(
    url: string,
    private readonly health: HealthBook,
    private readonly registry: () => Registry,
  ) {
    this.pub = connectRedis(url, redisClientOptions()).then((c) => c.on('error', () => undefined));
    // The subscriber issues nothing else. It subscribes on every 'ready' itself: ioredis's own
    // autoResubscribe drops the promise of its SUBSCRIBE, which rejects unhandled when the link
    // closes again at once (a Redis restart, a shutdown).
    const subOpts = { ...redisClientOptions(), enableOfflineQueue: true, maxRetriesPerRequest: null, commandTimeout: undefined, autoResubscribe: false };
    this.sub = connectRedis(url, subOpts).then((c) => {
      c.on('error', () => undefined);
      c.on('message', (_channel: string, raw: string) => this.receive(raw));
      c.on('ready', () => void c.subscribe(BREAKER_CHANNEL).catch(() => undefined));
      if (c.status === 'ready') c.subscribe(BREAKER_CHANNEL).catch(() => undefined);
      return c;
    });
    this.pub.catch(() => undefined);
    this.sub.catch(() => undefined);
    this.unsubscribe = health.onTransition((t) => this.publish(t));
  }

  private publish(t: BreakerTransition): void {
    if (t.remote) return; // followed, not caused here: publishing it again would echo forever
    const m: Message = { origin: this.origin, tool: t.tool, backend: t.backend, hash: t.hash, state: t.state };
    void this.pub.then((c) => c.publish(BREAKER_CHANNEL, JSON.stringify(m))).catch(() => undefined);
  }

  private receive(raw: string): void {
    const m = parse(raw);
    if (!m || m.origin === this.origin) return;
    const tool = this.registry().get(m.tool);
    const backend = tool?.backends.find((b) => b.id === m.backend && b.hash === m.hash);
    if (tool && backend) this.health.force(tool, backend, m.state);
  }

  async close(): Promise<void> {
    this.unsubscribe();
    await Promise.all(
      [this.pub, this.sub].map(async (p) => {
        const c = await p.catch(() => undefined);
        await c?.quit().catch(() => c.disconnect());
      }),
    );
  }
}
