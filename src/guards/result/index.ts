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

// rg-defs: scanDefinition (tool definitions at import), provisional too; rg-detect's file replaces all of this.
// Unicode tags, zero-width and bidi controls, the word joiner family and the BOM.
const DEF_INVISIBLE = /[\u{E0000}-\u{E007F}\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/gu;
const DEF_INJECTION = [
  /<\/?\s*(?:important|system|instructions?)\s*>/giu,
  /\bignore\s+(?:all\s+|any\s+)?(?:the\s+)?(?:previous|prior|above|earlier)\s+(?:instructions|prompts?|rules)\b/giu,
  /\b(?:before|prior to)\s+(?:using|calling)\s+this\s+tool\b/giu,
  /~\/\.ssh\b|\bid_rsa\b|\.aws\/credentials\b/giu,
  /\bdo\s+not\s+(?:tell|inform|mention\s+(?:this\s+)?to)\s+the\s+user\b/giu,
  /忽略(?:之前|先前|以上|上面|所有)[^。\n]{0,12}(?:指令|指示|提示)/gu,
  /(?:不要|切勿|请勿)(?:告诉|告知|通知)用户/gu,
  /(?:在)?(?:使用|调用)(?:此|这个|本)工具(?:之前|前)/gu,
];

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

function collect(text: string, re: RegExp): [number, number][] {
  const out: [number, number][] = [];
  for (const m of text.matchAll(re)) {
    const start = bytes(text.slice(0, m.index));
    out.push([start, start + bytes(m[0])]);
  }
  return out;
}

export function scanDefinition(text: string): readonly Finding[] {
  const findings: Finding[] = [];
  const injection = DEF_INJECTION.flatMap((re) => collect(text, re)).sort((a, b) => a[0] - b[0]);
  if (injection.length > 0) findings.push({ kind: 'injection', action: 'flag', count: injection.length, offsets: injection.slice(0, MAX_OFFSETS) });
  const invisible = collect(text, DEF_INVISIBLE);
  if (invisible.length > 0) findings.push({ kind: 'invisible', action: 'flag', count: invisible.length, offsets: invisible.slice(0, MAX_OFFSETS) });
  return findings;
}
