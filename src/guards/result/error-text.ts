import { GatewayError, type ErrorDetail } from '../../errors.js';
import type { CompiledResultGuards } from './compile.js';
import type { ResultFinding } from './stage.js';
import { MAX_LOCATED } from './stage.js';
import type { ScanContext } from './types.js';

/**
 * A failed call's error through the tool's text guards: an upstream's error body (UPSTREAM_ERROR
 * `details[].body`, an MCP tool error's text in `modelMessage`) is result text a model reads as
 * much as a result is. Redacting and stripping guards change it; a `refuse` guard withholds that
 * string (the call failed already: the error stays, its text does not); `flag` only reports.
 */
export function guardErrorText(g: CompiledResultGuards, err: GatewayError, ctx: ScanContext, sink: ResultFinding[]): GatewayError {
  if (g.text.length === 0) return err;
  const add = (kind: ResultFinding['kind'], action: ResultFinding['action'], count: number, path: string, offsets: readonly (readonly [number, number])[]) => {
    let f = sink.find((x) => x.kind === kind && x.action === action);
    if (!f) sink.push((f = { kind, action, count: 0, at: [] }));
    f.count += count;
    for (const [start, end] of offsets) if (f.at.length < MAX_LOCATED) f.at.push({ path, start, end });
  };
  const scan = (text: string, path: string): string => {
    let t = text;
    for (const guard of g.text) {
      const r = guard.scan(t, ctx);
      let refused = false;
      for (const f of r.findings) {
        add(f.kind, f.action, f.count, path, f.offsets);
        if (f.action === 'refuse') refused = true;
      }
      if (refused) return `[withheld by a result guard: ${[...new Set(r.findings.map((f) => f.kind))].join(', ')}]`;
      t = r.text;
    }
    return t;
  };
  const walk = (v: unknown, path: string): unknown => {
    if (typeof v === 'string') return scan(v, path);
    if (Array.isArray(v)) return v.map((x, i) => walk(x, `${path}/${i}`));
    if (v === null || typeof v !== 'object') return v;
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, `${path}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`)]));
  };
  const message = scan(err.message, '/error/message');
  const modelMessage = scan(err.modelMessage, '/error/modelMessage');
  const details = walk(err.details, '/error/details') as ErrorDetail[];
  return new GatewayError(err.code, message, {
    details,
    modelMessage,
    cause: err,
    ...(err.retryAfterSeconds !== undefined ? { retryAfterSeconds: err.retryAfterSeconds } : {}),
    ...(err.upstream ? { upstream: err.upstream } : {}),
    ...(err.insufficientScope ? { insufficientScope: err.insufficientScope } : {}),
  });
}
