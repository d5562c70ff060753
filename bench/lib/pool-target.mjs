// One long-lived target of bench/mcp-pool.mjs in a process of its own: `pool DIST` (McpPool of that
// build) or `direct` (a bare SDK client). The parent sends { n, from } and gets back the n call
// latencies (ms), timed here; { close: true } ends it. Own process, so that no two targets share a
// heap, a garbage collector or the JIT's state (they did: see bench/mcp-pool.mjs).
import { performance } from 'node:perf_hooks';
import { openTarget } from './pool-open.mjs';

const [kind, dist, everything] = process.argv.slice(2);
const { call, close } = await openTarget(kind, dist, everything);

process.on('message', async (m) => {
  if (m.close) {
    await close();
    process.exit(0);
  }
  const samples = [];
  for (let i = 0; i < m.n; i++) {
    const t0 = performance.now();
    await call(m.from + i);
    samples.push(performance.now() - t0);
  }
  process.send({ samples });
});
process.send({ ready: true });
