import type { Config } from '../../config/schema.js';
import type { StateStore } from '../../state/types.js';
import type { Lexicon } from '../lexicon.js';
import { MemoryLearnedBackend } from './backend.js';
import { Learner } from './learner.js';
import { RedisLearnedBackend } from './redis.js';
import { LearnedStats } from './stats.js';

export { Learner } from './learner.js';
export { LearnedFile, MAX_IMPORT_BYTES } from './file.js';

/** prefilter.learn when enabled: statistics in Redis with `state.redis`, else in memory. */
export function createLearner(
  config: Pick<Config, 'prefilter' | 'state'>,
  deps: { state: StateStore; lexicon: () => Lexicon | null; onWarning?: (msg: string, err?: unknown) => void; now?: () => number },
): Learner | undefined {
  const { learn } = config.prefilter;
  if (!learn.enabled) return undefined;
  const stats = new LearnedStats();
  const backend = config.state.redis ? new RedisLearnedBackend(config.state.redis) : new MemoryLearnedBackend(stats);
  return new Learner({ windowSeconds: learn.windowSeconds, state: deps.state, backend, stats, lexicon: deps.lexicon, ...(deps.onWarning ? { onWarning: deps.onWarning } : {}), ...(deps.now ? { now: deps.now } : {}) });
}
