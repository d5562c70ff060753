// prefilter.learn in the prefilter bench: learning curves on the dev sample, and the ranking's
// latency with learned terms at scale. Runs the gateway's own Learner (dist/prefilter/learn) on a
// memory store with a simulated clock: the code path of a real gateway minus HTTP.
import { pathToFileURL } from 'node:url';

const load = (distDir, file) => import(pathToFileURL(`${distDir}/${file}`).href);

/** A Learner on a memory store whose clock the caller moves. */
async function makeLearner(distDir, index) {
  const { Learner } = await load(distDir, 'learn/learner.js');
  const { MemoryLearnedBackend } = await load(distDir, 'learn/backend.js');
  const { LearnedStats } = await load(distDir, 'learn/stats.js');
  const { MemoryStore } = await load(distDir, '../state/memory.js');
  const clock = { t: Date.UTC(2026, 11, 1) };
  const now = () => clock.t;
  const stats = new LearnedStats();
  const learner = new Learner({ windowSeconds: 120, state: new MemoryStore(now), backend: new MemoryLearnedBackend(stats), stats, lexicon: () => index.lexicon, now, refreshMs: 3600_000 });
  return { learner, clock, stats };
}

/**
 * Recall@5 on the scored dev sample after 0, 1,000, 5,000 and 15,000 simulated sessions. A
 * session: one caller (of 500) routes with a dev query from the unscored 90 % and calls its gold
 * tool a few seconds later; sessions are a minute apart (15,000 ≈ 10 days: decay and the
 * per-caller caps apply as in a gateway). Returns one result per checkpoint.
 */
export async function learningCurves({ distDir, index, unscored, scored, evaluate, checkpoints = [0, 1000, 5000, 15000] }) {
  const { learner, clock } = await makeLearner(distDir, index);
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const ranked = { search: (q, o) => index.search(q, { ...o, learned: learner.boost }) };
  const out = [];
  let done = 0;
  for (const target of checkpoints) {
    for (; done < target; done++) {
      const q = unscored[Math.floor(rnd() * unscored.length)];
      const callerKey = `caller-${Math.floor(rnd() * 500)}`;
      const sessionTag = `s-${done}`;
      const candidates = ranked.search(q.query, { k: 5 }).map((c) => c.name);
      learner.noteSearch({ sessionTag, callerKey, query: q.query, candidates });
      await learner.settled();
      clock.t += 5000;
      learner.noteCall({ callerKey, sessionId: sessionTag, tool: q.gold[0] });
      await learner.settled();
      clock.t += 55_000;
    }
    out.push({ sessions: target, result: evaluate(ranked, scored), counters: { ...learner.counters } });
  }
  await learner.close();
  return out;
}

/**
 * An index's search with learned terms for `events` learning events spread over its tools (the
 * terms of random dev queries), for the latency rows at scale.
 */
export async function withLearning({ distDir, index, names, queries, events }) {
  const { stats } = await makeLearner(distDir, index);
  const { learnTerms } = await load(distDir, 'learn/terms.js');
  const { learnedBoost } = await load(distDir, 'learn/boost.js');
  let seed = 11;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const t = Date.UTC(2026, 11, 1);
  for (let i = 0; i < events; i++) {
    const q = queries[Math.floor(rnd() * queries.length)];
    stats.add(names[Math.floor(rnd() * names.length)], learnTerms(q.query, index.lexicon), 1 + Math.floor(rnd() * 2), t);
  }
  const learned = learnedBoost(stats, () => t);
  return { search: (q, o) => index.search(q, { ...o, learned }), learnedTools: stats.toolCount };
}
