import type { ReadResourceResult } from '@modelcontextprotocol/server';
import { madeBy, type Caller } from '../auth/caller.js';
import { newId } from '../util/ids.js';
import type { Passthrough } from './passthrough.js';

type Contents = ReadResourceResult['contents'];
type Content = Contents[number];

/**
 * A resources/read answer over `mcp.resources.maxReadBytes` is cut like a large tool result: the
 * answer carries its first part and `_meta["toolgate/truncated"]`; the whole text (text contents,
 * blobs as their base64, joined by newlines) is kept in the state store for `calls.retentionSeconds`
 * (up to `calls.maxStoredResultBytes`), readable by the same caller page by page as the resource
 * `toolgate:page/<callId>?offset=<n>` (or over REST, GET /v1/calls/<callId>/result?offset=<n>).
 */
const PAGE_URI = /^toolgate:page\/([A-Za-z0-9_-]{1,64})\?offset=(\d{1,12})$/;

export const isPageUri = (uri: string): boolean => uri.startsWith('toolgate:page/');

const bodyOf = (c: Content): string => ('text' in c && typeof c.text === 'string' ? c.text : 'blob' in c && typeof c.blob === 'string' ? c.blob : '');

/** The byte length of `s`'s first `max` bytes, moved back to a character's start. */
function cutAt(s: string, max: number): string {
  const buf = Buffer.from(s);
  if (buf.length <= max) return s;
  let end = max;
  while (end > 0 && ((buf[end] as number) & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString('utf8');
}

export async function capRead(p: Passthrough, caller: Caller, listed: string, contents: Contents, _answer: string): Promise<{ contents: Contents; truncated: boolean; meta?: Record<string, unknown> }> {
  const max = p.limits.maxReadBytes;
  const total = contents.reduce((n, c) => n + Buffer.byteLength(bodyOf(c)), 0);
  if (total <= max) return { contents, truncated: false };
  const doc = contents.map(bodyOf).join('\n');
  const kept: Content[] = [];
  let budget = max;
  let shown = 0;
  for (const c of contents) {
    if (budget <= 0) break;
    const body = bodyOf(c);
    const bytes = Buffer.byteLength(body);
    if (bytes <= budget) {
      kept.push(c);
    } else if ('text' in c) {
      kept.push({ ...c, text: cutAt(body, budget) });
    } else {
      const cut = body.slice(0, Math.floor(budget / 4) * 4); // whole base64 quanta
      kept.push({ ...c, blob: cut } as Content);
    }
    const keptBytes = Buffer.byteLength(bodyOf(kept.at(-1) as Content));
    shown += keptBytes + (kept.length > 1 ? 1 : 0);
    budget -= keptBytes + 1;
  }
  const callId = newId('c');
  let more: Record<string, unknown> = { totalBytes: Buffer.byteLength(doc), shownBytes: shown };
  try {
    await p.gw.pages.keep(callId, `resource:${listed}`, caller, { content: [{ type: 'text', text: doc }], isError: false });
    more = { ...more, callId, next: `toolgate:page/${callId}?offset=${shown}`, href: `/v1/calls/${callId}/result?offset=${shown}` };
  } catch {
    // not kept: the answer carries its first part only
  }
  return { contents: kept, truncated: true, meta: { 'toolgate/truncated': more } };
}

/** A page of a cut answer, for the caller that read it; undefined when there is none (or it is another caller's). */
export async function readPage(p: Passthrough, caller: Caller, uri: string): Promise<ReadResourceResult | undefined> {
  const m = PAGE_URI.exec(uri);
  if (!m) return undefined;
  const callId = m[1] as string;
  const owner = await p.gw.pages.owner(callId);
  if (!owner || !owner.tool.startsWith('resource:') || !madeBy(owner, caller)) return undefined;
  const page = await p.gw.pages.page(callId, Number(m[2]), p.limits.maxReadBytes);
  if (!page) return undefined;
  const next = page.nextOffset === null ? undefined : `toolgate:page/${callId}?offset=${page.nextOffset}`;
  return {
    contents: [{ uri, mimeType: 'text/plain', text: page.text }],
    _meta: { 'toolgate/truncated': { callId, offset: page.offset, totalBytes: page.totalBytes, storedBytes: page.storedBytes, ...(next ? { next } : {}) } },
  };
}
