import type { Redis } from 'ioredis';
import { connectRedis, redisClientOptions } from '../../state/redis.js';
import type { LearnedBackend } from './backend.js';
import { MAX_TERMS_PER_EVENT, MAX_TERMS_PER_TOOL, MAX_TOOLS, SLACK, scaleAt, type LearnedStats, type ScaledTable } from './stats.js';

/**
 * Learned statistics in Redis: one hash per tool (term → scaled weight, HINCRBYFLOAT), a sorted
 * set of the tools by total weight (to drop the weakest beyond MAX_TOOLS) and a version counter
 * that replicas poll to know when to reload. Each change is one Lua script: atomic across replicas.
 * Keys expire KEEP_MS after their last change.
 */
const PREFIX = 'toolgate:learn:tool:';
const TOOLS = 'toolgate:learn:tools';
const VERSION = 'toolgate:learn:version';
const KEEP_MS = 180 * 24 * 3600 * 1000;
const FIRST_CONNECT_MS = 2000;

/** KEYS: the tool's hash, the tools' set, the version. ARGV: tool, max terms, keep ms, slack, prefix, max tools, then term, increment pairs. */
const ADD = `
local total = 0
for i = 7, #ARGV, 2 do
  redis.call('HINCRBYFLOAT', KEYS[1], ARGV[i], ARGV[i + 1])
  total = total + tonumber(ARGV[i + 1])
end
local maxTerms = tonumber(ARGV[2])
if redis.call('HLEN', KEYS[1]) > maxTerms * tonumber(ARGV[4]) then
  local all = redis.call('HGETALL', KEYS[1])
  local rows = {}
  for i = 1, #all, 2 do rows[#rows + 1] = { all[i], tonumber(all[i + 1]) } end
  table.sort(rows, function(a, b) return a[2] > b[2] end)
  local kept = 0
  for i = 1, #rows do
    if i > maxTerms then redis.call('HDEL', KEYS[1], rows[i][1]) else kept = kept + rows[i][2] end
  end
  redis.call('ZADD', KEYS[2], kept, ARGV[1])
else
  redis.call('ZINCRBY', KEYS[2], total, ARGV[1])
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[6])
if over > 0 then
  for _, t in ipairs(redis.call('ZRANGE', KEYS[2], 0, over - 1)) do redis.call('DEL', ARGV[5] .. t) end
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, over - 1)
end
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('INCR', KEYS[3])
redis.call('PEXPIRE', KEYS[3], ARGV[3])
return 1`;

/** ARGV[1] prefix, ARGV[2] JSON { tool: { term: scaled } }, ARGV[3] keep ms. */
const REPLACE = `
for _, t in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do redis.call('DEL', ARGV[1] .. t) end
redis.call('DEL', KEYS[1])
local data = cjson.decode(ARGV[2])
for tool, terms in pairs(data) do
  local total = 0
  for term, v in pairs(terms) do
    redis.call('HSET', ARGV[1] .. tool, term, v)
    total = total + v
  end
  redis.call('PEXPIRE', ARGV[1] .. tool, ARGV[3])
  redis.call('ZADD', KEYS[1], total, tool)
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1`;

const RESET = `
local had = redis.call('DEL', ARGV[1] .. ARGV[2])
redis.call('ZREM', KEYS[1], ARGV[2])
redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return had`;

export class RedisLearnedBackend implements LearnedBackend {
  readonly shared = true;
  private readonly client: Promise<Redis>;
  private seen: string | undefined;
  private started = false;

  constructor(url: string) {
    this.client = connectRedis(url, redisClientOptions()).then((c) => c.on('error', () => undefined));
    this.client.catch(() => undefined);
  }

  /** The connection; at startup only, the first use waits (bounded) for it to be ready. */
  private async conn(): Promise<Redis> {
    const c = await this.client;
    if (this.started || c.status === 'ready') return c;
    this.started = true;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, FIRST_CONNECT_MS);
      c.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    return c;
  }

  async add(tool: string, terms: readonly string[], weight: number, now: number): Promise<void> {
    const inc = String(weight * scaleAt(now));
    const args = terms.slice(0, MAX_TERMS_PER_EVENT).flatMap((t) => [t, inc]);
    if (args.length === 0) return;
    const c = await this.conn();
    await c.eval(ADD, 3, PREFIX + tool, TOOLS, VERSION, tool, String(MAX_TERMS_PER_TOOL), String(KEEP_MS), String(SLACK), PREFIX, String(MAX_TOOLS), ...args);
  }

  async refresh(local: LearnedStats): Promise<void> {
    const c = await this.conn();
    const version = (await c.get(VERSION)) ?? '0';
    if (version === this.seen) return;
    const tools = await c.zrange(TOOLS, 0, -1);
    const table: ScaledTable = new Map();
    const pipe = c.pipeline();
    for (const t of tools) pipe.hgetall(PREFIX + t);
    const rows = tools.length > 0 ? ((await pipe.exec()) ?? []) : [];
    rows.forEach(([err, h], i) => {
      if (err || h === null || typeof h !== 'object') return;
      const m = new Map<string, number>();
      for (const [term, v] of Object.entries(h as Record<string, string>)) {
        const n = Number(v);
        if (Number.isFinite(n) && n > 0) m.set(term, n);
      }
      if (m.size > 0) table.set(tools[i] as string, m);
    });
    local.replace(table);
    this.seen = version;
  }

  async replace(table: ScaledTable): Promise<void> {
    const data: Record<string, Record<string, number>> = {};
    for (const [tool, m] of table) data[tool] = Object.fromEntries(m);
    const c = await this.conn();
    await c.eval(REPLACE, 2, TOOLS, VERSION, PREFIX, JSON.stringify(data), String(KEEP_MS));
  }

  async reset(tool: string): Promise<boolean> {
    const c = await this.conn();
    return Number(await c.eval(RESET, 2, TOOLS, VERSION, PREFIX, tool, String(KEEP_MS))) > 0;
  }

  async close(): Promise<void> {
    const c = await this.client.catch(() => undefined);
    await c?.quit().catch(() => c.disconnect());
  }
}
