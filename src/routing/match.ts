import { globToRegExp } from '../auth/caller.js';

/** What a backend's match rule may look at. */
export interface RouteContext {
  readonly caller: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** A backend's match rule, compiled at load time. */
export interface CompiledMatch {
  readonly callers: readonly RegExp[] | undefined;
  readonly header: { readonly name: string; readonly value: string } | undefined;
}

export function compileMatch(m: { callers?: string[]; header?: { name: string; value: string } }): CompiledMatch {
  return {
    callers: m.callers?.map(globToRegExp),
    header: m.header ? { name: m.header.name.toLowerCase(), value: m.header.value } : undefined,
  };
}

function anyMatches(patterns: readonly RegExp[], text: string): boolean {
  for (const re of patterns) if (re.test(text)) return true;
  return false;
}

/** Every condition the rule states must hold. */
export function backendMatches(m: CompiledMatch, ctx: RouteContext): boolean {
  if (m.callers && !anyMatches(m.callers, ctx.caller)) return false;
  if (m.header) {
    const v = ctx.headers[m.header.name];
    if ((Array.isArray(v) ? v[0] : v) !== m.header.value) return false;
  }
  return true;
}
