// A measuring aid for bench/peers.mjs (`--floor`), never a way to run toolgate: loaded with
// `node --import` into a gateway process, it replaces the call pipeline with a straight call to the
// tool's first backend through its adapter (for MCP tools: the pool's long-lived session). Gone:
// tool resolution and visibility, argument validation, rate limits, the loop guard, gates,
// idempotency, the cache, routing, the breaker, the deadline race, retries, fallbacks, result
// shaping, hashes, the audit record and the metrics. What stays is the front itself: HTTP, the
// origin check and auth hooks, the MCP transports, the pool. So the serial figures of a gateway
// with and without it, measured side by side, say what the pipeline costs a call and what the front
// costs beside a relay.
//
// TOOLGATE_BENCH_DIST names the build (dist/ or the peers bench's --dist).
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const dist = process.env.TOOLGATE_BENCH_DIST;
if (!dist) throw new Error('pipeline-bypass: TOOLGATE_BENCH_DIST is not set');
const { CallPipeline } = await import(pathToFileURL(join(dist, 'pipeline/index.js')).href);
const { Cancel } = await import(pathToFileURL(join(dist, 'util/cancel.js')).href);

CallPipeline.prototype.call = async function bypassed(req) {
  const tool = this.deps.registry().get(req.toolName);
  if (!tool) throw new Error(`pipeline-bypass: no tool '${req.toolName}'`);
  const backend = tool.backends[0];
  const payload = await this.deps.adapters[backend.target.kind].call({
    tool,
    backend,
    args: req.args ?? {},
    cancel: new Cancel(),
    deadline: Date.now() + tool.timeoutMs,
    requestId: req.requestId,
  });
  if (payload.kind !== 'result') throw new Error(`pipeline-bypass: '${tool.name}' answered ${payload.kind}, not a tool result`);
  return { status: 'ok', callId: req.requestId, tool: tool.name, result: payload.result };
};
