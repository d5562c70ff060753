// A measuring aid for the benchmarks (bench/peers.mjs and bench/http-overhead.mjs: "the floor"),
// never a way to run toolgate: loaded with `node --import` into a gateway process (see
// `pipelineBypass` in bench/lib/gateway.mjs), it replaces the call pipeline with a straight call to
// the tool's first backend through its adapter (for MCP tools: the pool's long-lived session) and
// the shaping of its answer into a tool result. Gone: visibility, argument validation, rate limits,
// the loop guard, gates, idempotency, the cache, routing, the breaker, the deadline race, retries,
// fallbacks, the result's size cap, hashes, the audit record and the metrics. What stays is the front:
// HTTP, the hooks (request id, origin check, auth), the body and response schemas, the MCP
// transports, the adapters and the pool. Measured side by side with a normal gateway, it says what
// the pipeline costs a call and what the front costs beside a relay or a bare proxy.
//
// TOOLGATE_BENCH_DIST names the build (dist/, or the peers bench's --dist).
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const dist = process.env.TOOLGATE_BENCH_DIST;
if (!dist) throw new Error('pipeline-bypass: TOOLGATE_BENCH_DIST is not set');
const load = (rel) => import(pathToFileURL(join(dist, rel)).href);
const { CallPipeline } = await load('pipeline/index.js');
const { shapeResult } = await load('pipeline/normalize.js');
const { Cancel } = await load('util/cancel.js');

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
  // The fields a CallResponse requires, so that the REST route answers as usual.
  return {
    callId: req.requestId,
    tool: tool.name,
    status: 'ok',
    backend: backend.id,
    attempts: 1,
    durationMs: 0,
    responseHash: '',
    fallback: null,
    policy: {},
    result: shapeResult(tool, payload),
  };
};
