/**
 * Result guards (SPEC §6, `resultGuards`): each built-in guard is a pure, linear-time function over
 * one string of a result; the stage (stage.ts) walks a ToolResult's strings through the compiled
 * list, collects findings, and refuses, redacts or flags as they say.
 */

/** What a finding is about (the audit's `findings[].kind`). */
export type FindingKind = 'secret' | 'email' | 'phone' | 'card' | 'iban' | 'cn_id' | 'injection' | 'invisible' | 'link' | 'blocks' | 'webhook';

/** What was done about it. `strip`, `redact`, `defang` and `truncate` change the result; `flag` only reports; `refuse` withholds it. */
export type FindingAction = 'redact' | 'flag' | 'refuse' | 'strip' | 'defang' | 'truncate';

/** One kind of finding in one scanned string. Never the matched text. */
export interface Finding {
  readonly kind: FindingKind;
  readonly action: FindingAction;
  readonly count: number;
  /** UTF-8 byte offsets [start, end) in the string as the guard received it; at most MAX_OFFSETS. */
  readonly offsets: readonly (readonly [number, number])[];
}

export const MAX_OFFSETS = 16;

export interface ScanContext {
  /** The gateway's own secret values (tool-file `${env:…}` values, keys), masked whatever the patterns say. */
  readonly secrets: ReadonlySet<string>;
}

/** A string after one guard: changed when the guard redacts, strips or defangs. */
export interface TextScan {
  readonly text: string;
  readonly findings: readonly Finding[];
}

/** One compiled built-in guard (secrets, pii, injection, invisible, links). */
export interface TextGuard {
  readonly name: 'secrets' | 'pii' | 'injection' | 'invisible' | 'links';
  scan(text: string, ctx: ScanContext): TextScan;
}
