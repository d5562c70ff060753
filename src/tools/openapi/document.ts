import { parseSource, SourceError, type FileProblem } from '../../util/source.js';

/**
 * STUB (oa-load) until oa-core's parser lands: same signature, no $ref resolution. Replaced
 * wholesale by oa-core's module on merge.
 */
export type ReadDocument = { doc: Record<string, unknown>; lineOf: (pointer: string) => number | undefined; version: string } | { problems: FileProblem[] };

export async function readDocument(text: string, opts: { file: string }): Promise<ReadDocument> {
  await Promise.resolve();
  let parsed;
  try {
    parsed = parseSource(text, opts.file);
  } catch (e) {
    if (e instanceof SourceError) return { problems: e.problems };
    throw e;
  }
  const doc = parsed.value;
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return { problems: [{ file: opts.file, path: '', message: 'an OpenAPI document is an object' }] };
  const d = doc as Record<string, unknown>;
  const version = typeof d['openapi'] === 'string' ? d['openapi'] : typeof d['swagger'] === 'string' ? d['swagger'] : undefined;
  if (version === undefined) return { problems: [{ file: opts.file, line: 1, path: '/openapi', message: 'not an OpenAPI document: no openapi (or swagger) version' }] };
  const refs = JSON.stringify(d).match(/"\$ref":"([^"]*)"/g) ?? [];
  for (const r of refs) {
    if (!r.includes('"#/')) return { problems: [{ file: opts.file, path: '', message: `unresolvable $ref ${r.slice(8)}` }] };
  }
  return { doc: d, lineOf: (p) => parsed.lineOf(p), version };
}
