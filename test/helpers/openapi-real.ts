import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { stringify } from 'yaml';
import type { TestGateway } from './app.js';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

/** The text of a gzipped document of test/fixtures/openapi/ (see the README there). */
export function fixtureText(gz: string): string {
  return gunzipSync(readFileSync(join('test/fixtures/openapi', gz))).toString('utf8');
}

export interface DocOperation {
  method: string;
  path: string;
  operationId: string | undefined;
  op: Record<string, unknown>;
}

/** Every operation of a document, counted from its paths here (not by the code under test). */
export function operationsOf(doc: Record<string, unknown>): DocOperation[] {
  const out: DocOperation[] = [];
  for (const [path, item] of Object.entries((doc['paths'] ?? {}) as Record<string, Record<string, unknown>>)) {
    for (const method of METHODS) {
      const op = item[method] as Record<string, unknown> | undefined;
      if (op && typeof op === 'object') out.push({ method, path, operationId: typeof op['operationId'] === 'string' ? op['operationId'] : undefined, op });
    }
  }
  return out;
}

/**
 * Writes documents (paths relative to tools.d, e.g. `specs/x.json`) and tool files into the
 * gateway's tools.d, then reloads it once: startGateway writes only top-level tool files.
 */
export async function installDocuments(gw: TestGateway, files: Record<string, string>, tools: Record<string, unknown>): Promise<void> {
  for (const [rel, text] of Object.entries(files)) {
    const path = join(gw.toolsDir, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  }
  for (const [file, tool] of Object.entries(tools)) writeFileSync(join(gw.toolsDir, file), typeof tool === 'string' ? tool : stringify(tool));
  await gw.app.gw.reload();
}

/** GET /v1/tools as the given key: the names and definitions a caller sees. */
export async function listTools(gw: TestGateway, key?: string): Promise<Record<string, unknown>[]> {
  const res = await gw.app.inject({ method: 'GET', url: '/v1/tools', headers: key ? { authorization: `Bearer ${key}` } : {} });
  if (res.statusCode !== 200) throw new Error(`GET /v1/tools: ${res.statusCode} ${res.body}`);
  return (res.json() as { tools: Record<string, unknown>[] }).tools;
}

/** GET /v1/tools/{name}: one tool's whole definition. */
export async function toolDef(gw: TestGateway, name: string, key?: string): Promise<Record<string, unknown>> {
  const res = await gw.app.inject({ method: 'GET', url: `/v1/tools/${encodeURIComponent(name)}`, headers: key ? { authorization: `Bearer ${key}` } : {} });
  if (res.statusCode !== 200) throw new Error(`GET /v1/tools/${name}: ${res.statusCode} ${res.body}`);
  return res.json() as Record<string, unknown>;
}
