import type { Config } from '../config/schema.js';
import { MemoryStore } from './memory.js';
import { RedisStore, type RedisStoreOptions } from './redis.js';
import type { StateStore } from './types.js';

/** Redis when `state.redis` (or REDIS_URL) is set, memory otherwise. */
export function createStateStore(config: Pick<Config, 'state'>, opts: RedisStoreOptions = {}): StateStore {
  return config.state.redis ? new RedisStore(config.state.redis, opts) : new MemoryStore();
}

export { MemoryStore, RedisStore };
export type { StateStore };
