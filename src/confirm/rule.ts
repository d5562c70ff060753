import type { ConfirmRuleFile } from '../tools/schema.js';
import { argAt, argSegments } from '../util/args.js';
import { pathProblem } from '../guards/path.js';

/** True when the condition holds; async where a path's symbolic links are walked. */
type Condition = (args: unknown) => boolean | Promise<boolean>;

/** `confirm`: always, never, or only when one of the rule's conditions holds for the arguments. */
export type ConfirmPolicy = boolean | { readonly when: readonly Condition[]; readonly describe: string };

export function compileConfirm(confirm: boolean | ConfirmRuleFile): ConfirmPolicy {
  if (typeof confirm === 'boolean') return confirm;
  const when = confirm.when.map((c): Condition => {
    const segs = argSegments(c.arg);
    const re = c.matches ? new RegExp(c.matches, 'i') : undefined;
    return async (args) => {
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
        // The path guard's whole check, symbolic links walked: a link inside that leads out asks too.
        if (c.notUnder !== undefined && (await pathProblem(v, [c.notUnder])) !== undefined) return true;
        if (re?.test(v)) return true;
      }
      return false;
    };
  });
  return { when, describe: confirm.when.map((c) => c.arg).join(', ') };
}

export async function needsConfirmation(policy: ConfirmPolicy, args: unknown): Promise<boolean> {
  if (typeof policy === 'boolean') return policy;
  for (const c of policy.when) if (await c(args)) return true;
  return false;
}
