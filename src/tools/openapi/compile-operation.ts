import { compileTool, type CompileContext } from '../compile.js';
import { providerNameOf } from '../names.js';
import { sha256Hex } from '../../util/hash.js';
import type { FileProblem } from '../../util/source.js';
import type { CompiledTool } from '../types.js';
import type { OperationDef } from './operations.js';
import { SHARED_SCHEMAS } from './schema-convert.js';

/**
 * One operation as a registry tool: its synthetic tool file compiled like any other (validation,
 * guards, gates, breakers, retries), its HTTP backend carrying the request plan the adapter
 * builds each request from.
 */
export function compileOperation(def: OperationDef, ctx: CompileContext): CompiledTool | FileProblem[] {
  const compiled = compileTool(def.file, { sharedSchemas: SHARED_SCHEMAS, ...ctx });
  if (Array.isArray(compiled)) return compiled;
  const oauth = def.plan.auth.find((a) => a.kind === 'oauth2');
  return {
    ...compiled,
    providerName: providerNameOf(def.name),
    backends: compiled.backends.map((b) => {
      if (b.target.kind !== 'http') return b;
      // The same plan on every backend, each on its own origin and base path.
      const at = def.origins?.get(b.id) ?? def.plan;
      return {
        ...b,
        // The plan is part of the backend's definition: a changed operation starts a new breaker.
        hash: sha256Hex(`${b.hash}\0${def.hash}`),
        target: { ...b.target, openapi: { ...def.plan, origin: at.origin, basePath: at.basePath }, ...(oauth?.kind === 'oauth2' ? { credentials: oauth.credentials } : {}) },
      };
    }),
    openapi: { spec: def.spec, operationId: def.operationId, method: def.method, path: def.path, hash: def.hash },
  };
}
