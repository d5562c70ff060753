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

/** Lower-case words: two queries that say the same words are one query. */
const normal = (q) => (q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).join(' ');

/**
 * The unscored queries the sessions may use: none that is a scored query over again, by its text
 * (lower-case words) or by the terms learning would keep of it (its analysed terms, as a set).
 */
export async function learnableQueries({ distDir, index, unscored, scored }) {
  const { learnTerms } = await load(distDir, 'learn/terms.js');
  const termKey = (q) => [...new Set(learnTerms(q, index.lexicon))].sort().join(' ');
  const texts = new Set(scored.map((q) => normal(q.query)));
  const termSets = new Set(scored.map((q) => termKey(q.query)));
  let sameText = 0;
  let sameTerms = 0;
  const kept = unscored.filter((q) => {
    if (texts.has(normal(q.query))) return (sameText++, false);
    if (termSets.has(termKey(q.query))) return (sameTerms++, false);
    return true;
  });
  return { kept, sameText, sameTerms };
}

/**
 * Recall@5 on the scored dev sample after 0, 1,000, 5,000 and 15,000 simulated sessions. A
 * session: one caller (of `callers`, 500 by default) routes with a dev query from the unscored 90 % (never one that
 * repeats a scored query: learnableQueries) and calls its gold tool 5 s later; sessions are a
 * minute apart (15,000 ≈ 10 days: decay and the per-caller caps apply as in a gateway). The
 * gateway's path in process: the search goes through SearchEvents to Learner.noteSearch as
 * POST /v1/route's does, the call to Learner.noteCall as the pipeline's onSessionCall does.
 * Returns one result per checkpoint, and the statistics learned at the end (tool → term → weight).
 */
export async function learningCurves({ distDir, index, unscored, scored, evaluate, checkpoints = [0, 1000, 5000, 15000], callers = 500 }) {
  const { learner, clock, stats } = await makeLearner(distDir, index);
  const { SearchEvents } = await load(distDir, 'search-events.js');
  const events = new SearchEvents();
  events.listen((e) => learner.noteSearch(e));
  const pool = await learnableQueries({ distDir, index, unscored, scored });
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const ranked = { search: (q, o) => index.search(q, { ...o, learned: learner.boost }) };
  const out = [];
  let done = 0;
  for (const target of checkpoints) {
    for (; done < target; done++) {
      const q = pool.kept[Math.floor(rnd() * pool.kept.length)];
      const callerKey = `caller-${Math.floor(rnd() * callers)}`;
      const sessionTag = `s-${done}`;
      const candidates = ranked.search(q.query, { k: 5 }).map((c) => c.name);
      events.onSearch({ source: 'route', sessionTag, callerKey, query: q.query, candidates });
      await learner.settled();
      clock.t += 5000;
      learner.noteCall({ callerKey, sessionId: sessionTag, tool: q.gold[0] });
      await learner.settled();
      clock.t += 55_000;
    }
    out.push({ sessions: target, result: evaluate(ranked, scored), counters: { ...learner.counters } });
  }
  const learned = stats.weights(clock.t);
  await learner.close();
  return { curves: out, learned, pool: { kept: pool.kept.length, sameText: pool.sameText, sameTerms: pool.sameTerms, scored: scored.length } };
}

/**
 * Query latency at scale, learning off and on, side by side. `learned` (tool → term → weight, the
 * statistics of learningCurves) is given to every synthetic tool made from that tool
 * (`sourceOf(name)`); without it, `events` random events (the terms of random queries). Three
 * ways, alternated pass after pass over `sample` (5 passes; per query its fastest pass, since on a
 * shared machine one pass's p95 is other processes' preemption): learning off; on; and on while
 * learning: before every 10th search (untimed: a gateway does it between searches) one more event
 * (a random query's terms to a random tool), so the searches pay for postings rebuilt after it.
 */
export async function learningLatency({ distDir, index, names, queries, sample, events, learned, sourceOf, passes = 5 }) {
  const { learnTerms } = await load(distDir, 'learn/terms.js');
  const { learnedBoost } = await load(distDir, 'learn/boost.js');
  const { LearnedStats } = await load(distDir, 'learn/stats.js');
  let seed = 11;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const t = Date.UTC(2026, 11, 1);
  const fill = (stats) => {
    if (learned) {
      for (const name of names) for (const [term, w] of learned.get(sourceOf(name)) ?? []) stats.add(name, [term], w, t);
    } else {
      for (let i = 0; i < events; i++) {
        const q = queries[Math.floor(rnd() * queries.length)];
        stats.add(names[Math.floor(rnd() * names.length)], learnTerms(q.query, index.lexicon), 1 + Math.floor(rnd() * 2), t);
      }
    }
    return stats;
  };
  const fixed = fill(new LearnedStats());
  const moving = fill(new LearnedStats());
  const ways = {
    off: { opts: {}, best: sample.map(() => Infinity) },
    on: { opts: { learned: learnedBoost(fixed, () => t) }, best: sample.map(() => Infinity) },
    live: { opts: { learned: learnedBoost(moving, () => t) }, best: sample.map(() => Infinity), stats: moving },
  };
  for (const w of Object.values(ways)) for (const q of sample) index.search(q.query, { k: 5, ...w.opts }); // warm-up
  for (let pass = 0; pass < passes; pass++) {
    for (const w of Object.values(ways)) {
      sample.forEach((q, i) => {
        if (w.stats && i % 10 === 0) {
          const x = queries[Math.floor(rnd() * queries.length)];
          w.stats.add(names[Math.floor(rnd() * names.length)], learnTerms(x.query, index.lexicon), 1, t);
        }
        const t0 = performance.now();
        index.search(q.query, { k: 5, ...w.opts });
        w.best[i] = Math.min(w.best[i], performance.now() - t0);
      });
    }
  }
  const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
  const out = { learnedTools: fixed.toolCount };
  for (const [k, w] of Object.entries(ways)) out[k] = { p50: pct(w.best, 50), p95: pct(w.best, 95) };
  return out;
}
