import type { ConfirmRuleFile } from '../tools/schema.js';
import { argAt, argSegments } from '../util/args.js';
import { normalizePath, underPrefix } from '../guards/path.js';

type Condition = (args: unknown) => boolean;

/** `confirm`: always, never, or only when one of the rule's conditions holds for the arguments. */
export type ConfirmPolicy = boolean | { readonly when: readonly Condition[]; readonly describe: string };

export function compileConfirm(confirm: boolean | ConfirmRuleFile): ConfirmPolicy {
  if (typeof confirm === 'boolean') return confirm;
  const when = confirm.when.map((c): Condition => {
    const segs = argSegments(c.arg);
    const re = c.matches ? new RegExp(c.matches, 'i') : undefined;
    return (args) => {
      const v = argAt(args, segs);
      if (v === undefined) return false;
      if (typeof v === 'number') {
        if (c.gt !== undefined && v > c.gt) return true;
        if (c.gte !== undefined && v >= c.gte) return true;
        if (c.lt !== undefined && v < c.lt) return true;
        if (c.lte !== undefined && v <= c.lte) return true;
      }
      if (c.equals !== undefined && v === c.equals) return true;
      if (typeof v === 'string') {
        if (c.notUnder !== undefined) {
          const p = normalizePath(v);
          if (p === undefined || !underPrefix(p, c.notUnder)) return true;
        }
        if (re?.test(v)) return true;
      }
      return false;
    };
  });
  return { when, describe: confirm.when.map((c) => c.arg).join(', ') };
}

export function needsConfirmation(policy: ConfirmPolicy, args: unknown): boolean {
  return typeof policy === 'boolean' ? policy : policy.when.some((c) => c(args));
}
