import type { ResultGuardFile } from '../../tools/result-guards-schema.js';
import { scanInjection, injectionGuard } from './injection.js';
import { invisibleGuard, scanInvisible } from './invisible.js';
import { linksGuard } from './links.js';
import { piiGuard } from './pii.js';
import { secretsGuard } from './secrets.js';
import type { Finding, TextGuard } from './types.js';

export type { Finding, FindingAction, FindingKind, ScanContext, TextGuard, TextScan } from './types.js';
export { SECRET_PLACEHOLDER } from './secrets.js';

/**
 * The built-in text guards of a merged `resultGuards` list, in the order they run: invisible first
 * (a secret split by zero-width characters is whole again once they are stripped), then secrets,
 * personal data, links (a redacted value is not a URL any more), and injection last (it reads the
 * text the model will get). `off` yields nothing; `maxBlocks` and `webhook` are not text guards
 * (the stage runs them). When a kind is listed twice, the last entry wins.
 */
export function compileTextGuards(entries: readonly ResultGuardFile[]): readonly TextGuard[] {
  const byName = new Map<TextGuard['name'], TextGuard | undefined>();
  for (const e of entries) {
    if ('invisible' in e) byName.set('invisible', e.invisible === 'off' ? undefined : invisibleGuard(e.invisible));
    else if ('secrets' in e) byName.set('secrets', e.secrets === 'off' ? undefined : secretsGuard(e.secrets));
    else if ('pii' in e) byName.set('pii', e.action === 'off' ? undefined : piiGuard(e.pii, e.action));
    else if ('links' in e) byName.set('links', e.links.action === 'off' ? undefined : linksGuard({ allowHosts: e.links.allowHosts ?? [], action: e.links.action }));
    else if ('injection' in e) byName.set('injection', e.injection === 'off' ? undefined : injectionGuard(e.injection));
  }
  const order: readonly TextGuard['name'][] = ['invisible', 'secrets', 'pii', 'links', 'injection'];
  return Object.freeze(order.map((n) => byName.get(n)).filter((g): g is TextGuard => g !== undefined));
}

/**
 * Checks on a tool's name, description or schema text at import (tool poisoning): injection
 * phrases and markup, and invisible characters, as `flag` findings (the caller holds the tool).
 * Offsets are UTF-8 bytes of `text`.
 */
export function scanDefinition(text: string): readonly Finding[] {
  return [...scanInvisible(text, 'flag').findings, ...scanInjection(text, 'flag').findings];
}
