import type { Ajv2020 } from 'ajv/dist/2020.js';
import { globToRegExp } from '../../auth/caller.js';
import type { Config } from '../../config/schema.js';
import { digest } from '../../util/hash.js';
import { toPointer, type FileProblem } from '../../util/source.js';
import { compileTool } from '../compile.js';
import type { SideEffectValue, ToolFile } from '../schema.js';
import type { CompiledTool } from '../types.js';
import type { OpenApiFile } from './file-schema.js';

/**
 * STUB (oa-load) until oa-core's operations land: same signature, a naive mapping (path and
 * query parameters, JSON body, no styles). Replaced wholesale by oa-core's module on merge.
 */
export interface OperationDef {
  readonly name: string;
  readonly operationId?: string;
  readonly method: string;
  readonly path: string;
  readonly tags: readonly string[];
  readonly file: ToolFile;
  readonly plan: unknown;
  readonly hash: string;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];
const snake = (s: string) => s.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase().replace(/[^a-z0-9_]+/g, '_').replace(/^_+|_+$/g, '');

function sideEffect(method: string): { sideEffect: SideEffectValue; idempotent: boolean } {
  if (method === 'get' || method === 'head' || method === 'options') return { sideEffect: 'read', idempotent: true };
  if (method === 'put') return { sideEffect: 'write', idempotent: true };
  if (method === 'delete') return { sideEffect: 'destructive', idempotent: false };
  return { sideEffect: 'write', idempotent: false };
}

export function operationDefs(spec: OpenApiFile, doc: Record<string, unknown>, lineOf: (p: string) => number | undefined): { ops: OperationDef[]; problems: FileProblem[] } {
  const ops: OperationDef[] = [];
  const problems: FileProblem[] = [];
  const servers = doc['servers'] as { url?: string }[] | undefined;
  const base = (spec.baseUrl ?? servers?.[0]?.url ?? '').replace(/\/$/, '');
  const paths = (doc['paths'] ?? {}) as Record<string, Record<string, Record<string, unknown>>>;
  const seen = new Map<string, string>();
  const matches = (globs: readonly string[] | undefined, keys: string[]) => (globs ?? []).some((g) => keys.some((k) => globToRegExp(g).test(k)));
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const pointer = toPointer(['paths', path, method]);
      const at = (message: string): FileProblem => {
        const line = lineOf(pointer);
        return line === undefined ? { file: '', path: pointer, message } : { file: '', line, path: pointer, message };
      };
      const operationId = typeof op['operationId'] === 'string' ? op['operationId'] : undefined;
      const tags = Array.isArray(op['tags']) ? (op['tags'] as string[]) : [];
      const keys = [operationId ?? '', ...tags, `${method.toUpperCase()} ${path}`];
      if ((spec.include && !matches(spec.include, keys)) || matches(spec.exclude, keys)) continue;
      const local = operationId ? snake(operationId) : snake(`${method}_${path}`);
      if (operationId && seen.has(operationId)) {
        problems.push(at(`duplicate operationId '${operationId}' (also ${seen.get(operationId)}): skipped`));
        continue;
      }
      if (operationId) seen.set(operationId, `${method.toUpperCase()} ${path}`);
      const params = (Array.isArray(op['parameters']) ? op['parameters'] : []) as { name: string; in: string; required?: boolean; schema?: unknown; style?: string }[];
      const bad = params.find((p) => p.style !== undefined && p.style !== 'form' && p.style !== 'simple');
      if (bad) {
        problems.push(at(`parameter '${bad.name}': style '${bad.style}' is not supported: skipped`));
        continue;
      }
      const properties: Record<string, unknown> = {};
      const required: string[] = [];
      for (const p of params) {
        properties[p.name] = p.schema ?? {};
        if (p.required || p.in === 'path') required.push(p.name);
      }
      const query = params.filter((p) => p.in === 'query').map((p) => `${p.name}={{${p.name}}}`);
      const url = base + path.replace(/\{([^}]+)\}/g, '{{$1}}') + (query.length > 0 ? `?${query.join('&')}` : '');
      const name = `${spec.name}.${local}`;
      const override = spec.overrides?.[operationId ?? ''] ?? spec.overrides?.[local];
      const se = sideEffect(method);
      const file: ToolFile = {
        name,
        description: String(op['summary'] ?? op['description'] ?? `${method.toUpperCase()} ${path}`),
        ...(tags.length > 0 ? { tags } : {}),
        inputSchema: { type: 'object', properties, required },
        ...se,
        ...(spec.timeoutMs !== undefined ? { timeoutMs: spec.timeoutMs } : {}),
        ...override,
        backends: [{ id: 'openapi', http: { method: method.toUpperCase() as 'GET', url, ...(method === 'get' ? {} : { body: '{{arguments}}' }) } }],
      };
      ops.push({ name, ...(operationId ? { operationId } : {}), method: method.toUpperCase(), path, tags, file, plan: url, hash: digest({ op, base }) });
    }
  }
  return { ops, problems };
}

export function compileOperation(
  def: OperationDef,
  ctx: { file: string; fileHash: string; defaults: Config['defaults']; ajv: Ajv2020; lineOf: (p: string) => number | undefined },
): CompiledTool | FileProblem[] {
  return compileTool(def.file, { ...ctx, lineOf: () => undefined });
}
