import { GatewayError } from '../errors.js';
import type { GuardFile } from '../tools/schema.js';
import type { CompiledTool } from '../tools/types.js';
import { argAt, argSegments } from '../util/args.js';
import { pathAllowed } from './path.js';
import { readOnlySqlProblem } from './sql.js';
import { urlProblem } from './url.js';

/** One argument check, compiled at load time. */
export interface CompiledGuard {
  readonly arg: string;
  readonly segments: readonly string[];
  /** Why the value is refused, or undefined. */
  readonly check: (value: unknown) => string | undefined;
  /** What is allowed, told to the model when it is refused. */
  readonly allowed: string;
}

export function compileGuard(g: GuardFile): CompiledGuard {
  const base = { arg: g.arg, segments: argSegments(g.arg) };
  if (g.pathPrefixes) {
    const prefixes = g.pathPrefixes;
    return {
      ...base,
      allowed: `paths under ${prefixes.join(' or ')}`,
      check: (v) => (typeof v !== 'string' || !pathAllowed(v, prefixes) ? 'the path leaves the allowed directories' : undefined),
    };
  }
  if (g.deny) {
    const res = g.deny.map((p) => new RegExp(p, 'i'));
    return {
      ...base,
      allowed: 'values that match none of the denied patterns',
      check: (v) => {
        const text = typeof v === 'string' ? v : JSON.stringify(v ?? null);
        const hit = res.find((re) => re.test(text));
        return hit ? `the value matches a denied pattern (${hit.source})` : undefined;
      },
    };
  }
  if (g.readOnlySql) {
    return { ...base, allowed: 'a single read-only SELECT statement', check: (v) => (typeof v === 'string' ? readOnlySqlProblem(v) : 'not a SQL string') };
  }
  const hosts = g.urlHosts;
  const allowPrivate = g.allowPrivate ?? false;
  return {
    ...base,
    allowed: hosts && hosts.length > 0 ? `URLs on ${hosts.join(', ')}` : 'public http(s) URLs',
    check: (v) => (typeof v === 'string' ? urlProblem(v, hosts, allowPrivate) : 'not a URL string'),
  };
}

/** The schema problem of a guard entry: exactly one kind of check. */
export function guardKindProblem(g: GuardFile): string | undefined {
  const kinds = [g.pathPrefixes, g.deny, g.readOnlySql, g.urlHosts ?? (g.allowPrivate !== undefined ? [] : undefined)].filter((k) => k !== undefined);
  return kinds.length === 1 ? undefined : 'a guard needs exactly one of pathPrefixes, deny, readOnlySql or urlHosts';
}

/** Stage: every guard of the tool passes, or the call is FORBIDDEN with what is allowed. */
export function checkGuards(tool: CompiledTool, args: Readonly<Record<string, unknown>>): void {
  for (const g of tool.guards) {
    const value = argAt(args, g.segments);
    if (value === undefined) continue; // absent: the schema decides whether it was required
    const values = Array.isArray(value) && g.allowed.startsWith('paths') ? value : [value];
    for (const v of values) {
      const problem = g.check(v);
      if (problem) {
        throw new GatewayError('FORBIDDEN', `argument '${g.arg}' refused by a guard of '${tool.name}': ${problem}`, {
          modelMessage: `The argument '${g.arg}' is not allowed: ${problem}. Only ${g.allowed} are allowed; change the argument.`,
          details: [{ path: `/${g.segments.join('/')}`, message: problem, allowed: g.allowed }],
        });
      }
    }
  }
}
