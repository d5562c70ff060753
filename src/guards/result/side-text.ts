import { GatewayError, type ErrorDetail } from '../../errors.js';
import type { CompiledResultGuards } from './compile.js';
import type { ResultFinding } from './stage.js';
import { MAX_LOCATED } from './stage.js';
import type { ScanContext } from './types.js';
import { pointerSegment } from '../../util/source.js';

/**
 * Upstream text outside a result that reaches the model or the client all the same: an error's
 * text and an MCP progress message. Redacting and stripping guards change it; a `refuse` guard
 * withholds that string (the error stays, its text does not; the progress note loses its message);
 * `flag` only reports. Findings go to the call's `sink` (its audit record).
 */
export function guardSideText(g: CompiledResultGuards, text: string, path: string, ctx: ScanContext, sink: ResultFinding[]): string | undefined {
  let t = text;
  for (const guard of g.text) {
    const r = guard.scan(t, ctx);
    let refused = false;
    for (const f of r.findings) {
      let found = sink.find((x) => x.kind === f.kind && x.action === f.action);
      if (!found) sink.push((found = { kind: f.kind, action: f.action, count: 0, at: [] }));
      found.count += f.count;
      for (const [start, end] of f.offsets) if (found.at.length < MAX_LOCATED) found.at.push({ path, start, end });
      if (f.action === 'refuse') refused = true;
    }
    if (refused) return undefined;
    t = r.text;
  }
  return t;
}

/** A failed call's error through the tool's text guards: an upstream's error body (UPSTREAM_ERROR `details[].body`, an MCP tool error's text in `modelMessage`). */
export function guardErrorText(g: CompiledResultGuards, err: GatewayError, ctx: ScanContext, sink: ResultFinding[]): GatewayError {
  if (g.text.length === 0) return err;
  const scan = (text: string, path: string): string => guardSideText(g, text, path, ctx, sink) ?? '[withheld by a result guard]';
  const walk = (v: unknown, path: string): unknown => {
    if (typeof v === 'string') return scan(v, path);
    if (Array.isArray(v)) return v.map((x, i) => walk(x, `${path}/${i}`));
    if (v === null || typeof v !== 'object') return v;
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, `${path}/${pointerSegment(k)}`)]));
  };
  const message = scan(err.message, '/error/message');
  const modelMessage = scan(err.modelMessage, '/error/modelMessage');
  const details = walk(err.details, '/error/details') as ErrorDetail[];
  return new GatewayError(err.code, message, {
    details,
    modelMessage,
    ...(err.retryAfterSeconds !== undefined ? { retryAfterSeconds: err.retryAfterSeconds } : {}),
    ...(err.upstream ? { upstream: err.upstream } : {}),
    ...(err.insufficientScope ? { insufficientScope: err.insufficientScope } : {}),
  });
}
