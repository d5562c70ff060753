import { GatewayError } from '../errors.js';
import type { GuardFile } from '../tools/schema.js';
import type { CompiledTool } from '../tools/types.js';
import { argAt, argSegments, withArgAt } from '../util/args.js';
import { pathProblem } from './path.js';
import { compileReadOnlySql } from './sql/index.js';
import { checkUrl, systemLookup, type LookupAll, type UrlPolicy } from './url.js';

/**
 * A guard's decision on one value: refused with a reason, or allowed with the exact value that
 * goes upstream (a guard that parses may re-serialize it, so what was checked is what is sent).
 */
export type GuardVerdict = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly problem: string };

/** One argument check, compiled at load time. */
export interface CompiledGuard {
  readonly arg: string;
  readonly segments: readonly string[];
  /** An array value is checked item by item (path lists). */
  readonly eachItem: boolean;
  /** The verdict on one value; async where the check must look something up (DNS). */
  readonly check: (value: unknown) => GuardVerdict | Promise<GuardVerdict>;
  /** What is allowed, told to the model when it is refused. */
  readonly allowed: string;
  /** A URL guard's policy (builtin fetch applies it again to the addresses it connects to). */
  readonly url?: UrlPolicy;
}

export { GuardConfigError } from './sql/index.js';

export const allow = (value: unknown): GuardVerdict => ({ ok: true, value });
export const refuse = (problem: string): GuardVerdict => ({ ok: false, problem });
const verdictOf = (value: unknown, problem: string | undefined): GuardVerdict => (problem === undefined ? allow(value) : refuse(problem));

/** What a guard may need from outside: the resolver of `resolve: true` URL guards (tests give their own). */
export interface GuardDeps {
  readonly lookup?: LookupAll;
}

export function compileGuard(g: GuardFile, deps: GuardDeps = {}): CompiledGuard {
  const base = { arg: g.arg, segments: argSegments(g.arg), eachItem: false };
  if (g.pathPrefixes) {
    const prefixes = g.pathPrefixes;
    const how = { percentDecoded: g.percentDecoded ?? false, backslashSeparator: g.backslashSeparator ?? false, relativeTo: g.relativeTo ?? '/' };
    return {
      ...base,
      eachItem: true,
      allowed: `paths under ${prefixes.join(' or ')}`,
      // The value is judged exactly as it will be sent, so it is sent unchanged.
      check: async (v) => verdictOf(v, typeof v === 'string' ? await pathProblem(v, prefixes, how) : 'not a path string'),
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
        return verdictOf(v, hit ? `the value matches a denied pattern (${hit.source})` : undefined);
      },
    };
  }
  if (g.readOnlySql !== undefined) {
    const sql = compileReadOnlySql(g.readOnlySql);
    return { ...base, allowed: sql.allowed, check: async (v) => verdictOf(v, await sql.check(v)) };
  }
  const policy = { hosts: g.urlHosts, allowPrivate: g.allowPrivate ?? false, resolve: g.resolve ?? false };
  const lookup = deps.lookup ?? systemLookup;
  return {
    ...base,
    url: policy,
    allowed: policy.hosts && policy.hosts.length > 0 ? `http(s) URLs on ${policy.hosts.join(', ')}` : 'public http(s) URLs',
    // What is sent is the URL as it was checked: its WHATWG serialization.
    check: async (v) => {
      if (typeof v !== 'string') return refuse('not a URL string');
      const r = await checkUrl(v, policy, lookup);
      return 'href' in r ? allow(r.href) : refuse(r.problem);
    },
  };
}

/** The schema problem of a guard entry: exactly one kind of check, and only its own options. */
export function guardKindProblem(g: GuardFile): string | undefined {
  const isUrl = g.urlHosts !== undefined || g.allowPrivate !== undefined || g.resolve !== undefined;
  const kinds = [g.pathPrefixes, g.deny, g.readOnlySql, isUrl ? true : undefined].filter((k) => k !== undefined);
  if (kinds.length !== 1) return 'a guard needs exactly one of pathPrefixes, deny, readOnlySql or urlHosts';
  if (!g.pathPrefixes && (g.percentDecoded !== undefined || g.backslashSeparator !== undefined || g.relativeTo !== undefined)) {
    return 'percentDecoded, backslashSeparator and relativeTo belong to a pathPrefixes guard';
  }
  if (g.resolve && g.allowPrivate) return 'resolve: true refuses private addresses, which allowPrivate: true allows: choose one';
  return undefined;
}

function refused(tool: CompiledTool, g: CompiledGuard, problem: string): GatewayError {
  return new GatewayError('FORBIDDEN', `argument '${g.arg}' refused by a guard of '${tool.name}': ${problem}`, {
    modelMessage: `The argument '${g.arg}' is not allowed: ${problem}. Only ${g.allowed} are allowed; change the argument.`,
    details: [{ path: `/${g.segments.join('/')}`, message: problem, allowed: g.allowed }],
  });
}

/**
 * Stage: every guard of the tool passes, or the call is FORBIDDEN with what is allowed. Returns the
 * arguments to send: the same object when no guard rewrote a value, else a copy carrying the values
 * exactly as the guards checked them.
 */
export async function applyGuards(tool: CompiledTool, args: Readonly<Record<string, unknown>>): Promise<Record<string, unknown>> {
  let out = args as Record<string, unknown>;
  for (const g of tool.guards) {
    const value = argAt(out, g.segments);
    if (value === undefined) continue; // absent: the schema decides whether it was required
    const items = g.eachItem && Array.isArray(value) ? (value as unknown[]) : undefined;
    let changed = false;
    const sent: unknown[] = [];
    for (const v of items ?? [value]) {
      const verdict = await g.check(v);
      if (!verdict.ok) throw refused(tool, g, verdict.problem);
      if (verdict.value !== v) changed = true;
      sent.push(verdict.value);
    }
    if (changed) out = withArgAt(out, g.segments, items ? sent : sent[0]);
  }
  return out;
}
