/**
 * PLACEHOLDER until rg-detect's detectors land (their branch owns this file and replaces it):
 * the interface the stage is written against, with a few shapes so the stage can be tested.
 */
import type { ResultGuardFile } from '../../tools/result-guards-schema.js';
import type { Finding, FindingAction, FindingKind, ScanContext, TextGuard, TextScan } from './types.js';
import { MAX_OFFSETS } from './types.js';

function replaceAll(text: string, re: RegExp, kind: FindingKind, action: FindingAction, placeholder: (m: string) => string): TextScan {
  const offsets: [number, number][] = [];
  let count = 0;
  const out = text.replace(re, (m: string, ...rest: unknown[]) => {
    const at = rest.find((r) => typeof r === 'number') as number;
    count++;
    if (offsets.length < MAX_OFFSETS) {
      const start = Buffer.byteLength(text.slice(0, at));
      offsets.push([start, start + Buffer.byteLength(m)]);
    }
    return action === 'flag' || action === 'refuse' ? m : placeholder(m);
  });
  const findings: Finding[] = count > 0 ? [{ kind, action, count, offsets }] : [];
  return { text: action === 'flag' || action === 'refuse' ? text : out, findings };
}

const SECRET = /AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{36}|sk-[A-Za-z0-9]{32,}|-----BEGIN [A-Z ]*PRIVATE KEY-----[^-]{0,8192}-----END [A-Z ]*PRIVATE KEY-----/g;
const EMAIL = /[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,8}/g;
const INJECTION = /ignore (?:all )?previous instructions/gi;
const INVISIBLE = /[\u200B-\u200F\u202A-\u202E\u2066-\u2069]|\uDB40[\uDC00-\uDC7F]/g;

export function compileTextGuards(entries: readonly ResultGuardFile[]): readonly TextGuard[] {
  const out: TextGuard[] = [];
  for (const e of entries) {
    if ('secrets' in e && e.secrets !== 'off') {
      const action = e.secrets as FindingAction;
      out.push({
        name: 'secrets',
        scan: (text: string, ctx: ScanContext) => {
          let t = text;
          for (const s of ctx.secrets) if (s.length >= 4 && t.includes(s)) t = t.split(s).join('[REDACTED:secret]');
          return replaceAll(t, new RegExp(SECRET.source, 'g'), 'secret', action, () => '[REDACTED:secret]');
        },
      });
    }
    if ('pii' in e && e.action !== 'off' && e.pii.includes('email')) {
      const action = e.action as FindingAction;
      out.push({ name: 'pii', scan: (text: string) => replaceAll(text, new RegExp(EMAIL.source, 'g'), 'email', action, () => '[REDACTED:email]') });
    }
    if ('injection' in e && e.injection !== 'off') {
      const action = e.injection as FindingAction;
      out.push({ name: 'injection', scan: (text: string) => replaceAll(text, new RegExp(INJECTION.source, 'gi'), 'injection', action, (m) => m) });
    }
    if ('invisible' in e && e.invisible !== 'off') {
      const action = e.invisible as FindingAction;
      out.push({ name: 'invisible', scan: (text: string) => replaceAll(text, new RegExp(INVISIBLE.source, 'g'), 'invisible', action, () => '') });
    }
  }
  const order = ['secrets', 'pii', 'injection', 'invisible', 'links'];
  return out.sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
}

export function scanDefinition(text: string): readonly Finding[] {
  return replaceAll(text, new RegExp(INJECTION.source, 'gi'), 'injection', 'flag', (m) => m).findings;
}
