import { GatewayError } from '../errors.js';
import type { ToolAdapter, UpstreamPayload } from '../adapters/types.js';
import type { BackendTarget, CompiledBackend, CompiledTool } from '../tools/types.js';
import { orderBackends, type Rng } from '../routing/select.js';

export type Adapters = Readonly<Record<BackendTarget['kind'], ToolAdapter>>;

/** What a call did on its way: written to the response and the audit record. */
export interface PolicyTrail {
  tried: string[];
  attempts: number;
  failover: boolean;
  fallback?: string;
}

export interface Execution {
  payload: UpstreamPayload;
  backend: CompiledBackend;
}

/**
 * Stage: runs the call on a backend under the tool's one deadline. When the deadline passes
 * the signal aborts the adapter's upstream work and the call fails with TIMEOUT at once,
 * even if an adapter were slow to notice.
 */
export async function execute(
  tool: CompiledTool,
  args: Readonly<Record<string, unknown>>,
  deps: { adapters: Adapters; rng: Rng; requestId: string; signal?: AbortSignal | undefined },
  trail: PolicyTrail,
): Promise<Execution> {
  const deadline = Date.now() + tool.timeoutMs;
  const ac = new AbortController();
  const timeout = new GatewayError('TIMEOUT', `'${tool.name}' did not finish within ${tool.timeoutMs} ms; the upstream request was aborted`, {
    upstream: { transient: true, noEffect: false },
  });
  const timer = setTimeout(() => ac.abort(timeout), tool.timeoutMs);
  const onCallerGone = () => ac.abort(new GatewayError('UNAVAILABLE', 'the caller went away; the call was cancelled'));
  deps.signal?.addEventListener('abort', onCallerGone, { once: true });
  try {
    const backend = orderBackends(tool.backends, deps.rng)[0] as CompiledBackend;
    trail.tried.push(backend.id);
    trail.attempts++;
    const aborted = new Promise<never>((_, reject) => {
      ac.signal.addEventListener('abort', () => reject(ac.signal.reason as Error), { once: true });
    });
    const call = deps.adapters[backend.target.kind].call({ tool, backend, args, signal: ac.signal, deadline, requestId: deps.requestId });
    call.catch(() => undefined); // settled by the race below; keep a late rejection from going unhandled
    const payload = await Promise.race([call, aborted]);
    return { payload, backend };
  } catch (e) {
    throw ac.signal.aborted ? ac.signal.reason : e;
  } finally {
    clearTimeout(timer);
    deps.signal?.removeEventListener('abort', onCallerGone);
  }
}
