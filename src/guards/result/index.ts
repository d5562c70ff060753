/**
 * PROVISIONAL (rg-defs): a stand-in for rg-detect's detectors, so that the definition checks can be
 * built and tested before they land. rg-detect's src/guards/result/index.ts replaces this file
 * whole at the merge (take theirs); only `scanDefinition(text): readonly Finding[]` is used here.
 */
import type { Finding } from './types.js';
import { MAX_OFFSETS } from './types.js';

// Unicode tags, zero-width and bidi controls, the word joiner family and the BOM.
const INVISIBLE = /[\u{E0000}-\u{E007F}\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/gu;
const INJECTION = [
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
  const injection = INJECTION.flatMap((re) => collect(text, re)).sort((a, b) => a[0] - b[0]);
  if (injection.length > 0) findings.push({ kind: 'injection', action: 'flag', count: injection.length, offsets: injection.slice(0, MAX_OFFSETS) });
  const invisible = collect(text, INVISIBLE);
  if (invisible.length > 0) findings.push({ kind: 'invisible', action: 'flag', count: invisible.length, offsets: invisible.slice(0, MAX_OFFSETS) });
  return findings;
}
