// Reads a V8 .cpuprofile (node --cpu-prof) and sums self time per function and per file, within a
// time window, with the JavaScript callers of the heaviest native frames (writev, GC…).
import { readFileSync } from 'node:fs';

/**
 * Returns { totalMs, functions: [{ name, where, selfMs, pct, callers }], inclusive: [{ name, where, totalMs, pct }],
 * packages: [{ pkg, selfMs, pct }], files: [{ file, selfMs, pct }] },
 * sorted by self time. `fromMs`/`toMs` bound the window, in ms since the profile started (e.g. to
 * leave out start-up); `rootDir` is cut from file URLs.
 */
export function summarize(file, { rootDir = '', top = 25, fromMs = 0, toMs = Infinity, inclusiveOf = (url) => url.includes('/dist/') && !url.includes('node_modules') } = {}) {
  const prof = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map(); // node id -> µs
  const { samples, timeDeltas } = prof;
  let t = 0;
  for (let i = 0; i < samples.length; i++) {
    t += timeDeltas[i];
    // timeDeltas[i + 1] is the time until the next sample: attributed to this one.
    const dt = timeDeltas[i + 1] ?? 0;
    if (t / 1000 < fromMs || t / 1000 > toMs) continue;
    self.set(samples[i], (self.get(samples[i]) ?? 0) + dt);
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const clean = (url) => url.replace('file://', '').replace(rootDir, '');
  const label = (cf) => `${cf.functionName || '(anonymous)'}\u0000${cf.url ? `${clean(cf.url)}:${cf.lineNumber + 1}` : ''}`;
  const fn = new Map();
  const callers = new Map(); // function key -> Map(caller key -> µs)
  const files = new Map();
  const packages = new Map(); // npm package, node: internals, the app's own top folder, or a native frame
  // Inclusive (total) time of the functions whose file matches `inclusiveOf`: each sample counts once
  // for every such function on its stack.
  const inclusive = new Map();
  for (const [id, us] of self) {
    const seen = new Set();
    for (let p = id; p !== undefined; p = parent.get(p)) {
      const cf = byId.get(p).callFrame;
      if (!cf.url || !inclusiveOf(cf.url)) continue;
      const key = label(cf);
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + us);
    }
  }
  for (const [id, us] of self) {
    const cf = byId.get(id).callFrame;
    const key = label(cf);
    fn.set(key, (fn.get(key) ?? 0) + us);
    // Nearest caller frame with a URL that is not node's own internals.
    let p = parent.get(id);
    while (p !== undefined && !/^file:|^\/|node_modules|dist\//.test(byId.get(p).callFrame.url || '')) p = parent.get(p);
    if (p !== undefined) {
      const m = callers.get(key) ?? new Map();
      const ck = label(byId.get(p).callFrame).replace('\u0000', ' ');
      m.set(ck, (m.get(ck) ?? 0) + us);
      callers.set(key, m);
    }
    const f = cf.url ? clean(cf.url) : `(${cf.functionName || 'native'})`;
    files.set(f, (files.get(f) ?? 0) + us);
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(cf.url)?.[1] ?? (cf.url.startsWith('node:') ? 'node: internals' : cf.url ? clean(cf.url).split('/')[0] : f);
    packages.set(pkg, (packages.get(pkg) ?? 0) + us);
  }
  const sorted = (m) => [...m].sort((a, b) => b[1] - a[1]);
  return {
    totalMs: total / 1000,
    functions: sorted(fn).slice(0, top).map(([k, us]) => {
      const [name, where] = k.split('\u0000');
      const cs = sorted(callers.get(k) ?? new Map()).slice(0, 2).map(([c, cus]) => `${c} (${((100 * cus) / us).toFixed(0)}%)`);
      return { name, where, selfMs: us / 1000, pct: (100 * us) / total, callers: cs };
    }),
    inclusive: sorted(inclusive).slice(0, top).map(([k, us]) => {
      const [name, where] = k.split('\u0000');
      return { name, where, totalMs: us / 1000, pct: (100 * us) / total };
    }),
    packages: sorted(packages).map(([pkg, us]) => ({ pkg, selfMs: us / 1000, pct: (100 * us) / total })),
    files: sorted(files).slice(0, top).map(([f, us]) => ({ file: f, selfMs: us / 1000, pct: (100 * us) / total })),
  };
}
