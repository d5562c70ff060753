import type { ToolResult } from '../adapters/types.js';
import type { StateStore } from '../state/types.js';
import { issuerField, type Caller } from '../auth/caller.js';

/** A large result's full text, kept for paging after the response carried only its first part. */
interface StoredResult {
  callId: string;
  tool: string;
  caller: string;
  issuer?: string;
  subject?: string;
  text: string;
  /** Bytes of the whole document; more than the kept text when it was over the store's cap. */
  totalBytes: number;
  createdAt: string;
}

export interface ResultPage {
  callId: string;
  tool: string;
  offset: number;
  /** Where the next page starts, or null at the end of what was kept. */
  nextOffset: number | null;
  totalBytes: number;
  /** Bytes kept for paging (less than totalBytes when the result was over `maxStoredResultBytes`). */
  storedBytes: number;
  text: string;
}

/** The text document a result pages through: its text blocks joined by newlines (structured content alone when it has none). */
export function resultDocument(result: ToolResult): string {
  const texts = result.content.filter((b) => b.type === 'text' && typeof b['text'] === 'string').map((b) => b['text'] as string);
  if (texts.length > 0) return texts.join('\n');
  return result.structuredContent === undefined ? '' : JSON.stringify(result.structuredContent);
}

/**
 * Results over `result.maxBytes`: the response carries the capped part and a link; the full
 * text stays in the state store (memory or Redis) for `retentionMs`, readable page by page by
 * the caller who made the call (and approvers and admins).
 */
export class ResultPages {
  constructor(
    private readonly store: StateStore,
    private readonly retentionMs: number,
    private readonly maxStoredBytes: number,
  ) {}

  private key(callId: string): string {
    return `toolgate:result:${callId}`;
  }

  /** Keeps the document; resolves with its size in bytes. */
  async keep(callId: string, tool: string, caller: Caller, result: ToolResult): Promise<number> {
    const doc = Buffer.from(resultDocument(result));
    const text = doc.length > this.maxStoredBytes ? doc.subarray(0, charStart(doc, this.maxStoredBytes)).toString('utf8') : doc.toString('utf8');
    const stored: StoredResult = { callId, tool, caller: caller.id, ...issuerField(caller), text, totalBytes: doc.length, createdAt: new Date().toISOString() };
    await this.store.set(this.key(callId), JSON.stringify(stored), this.retentionMs);
    return doc.length;
  }

  async owner(callId: string): Promise<{ caller: string; issuer?: string; subject?: string; tool: string } | undefined> {
    const stored = await this.load(callId);
    return stored && { caller: stored.caller, ...(stored.issuer !== undefined ? { issuer: stored.issuer } : {}), ...(stored.subject !== undefined ? { subject: stored.subject } : {}), tool: stored.tool };
  }

  /** `limit` bytes from `offset`, both moved back to a character's start; undefined when not kept (or expired). */
  async page(callId: string, offset: number, limit: number): Promise<ResultPage | undefined> {
    const stored = await this.load(callId);
    if (!stored) return undefined;
    const doc = Buffer.from(stored.text);
    const start = charStart(doc, Math.min(offset, doc.length));
    let end = charStart(doc, Math.min(start + limit, doc.length));
    if (end === start && start < doc.length) end = charEnd(doc, start); // a limit smaller than one character still moves on
    return {
      callId,
      tool: stored.tool,
      offset: start,
      nextOffset: end < doc.length ? end : null,
      totalBytes: stored.totalBytes,
      storedBytes: doc.length,
      text: doc.subarray(start, end).toString('utf8'),
    };
  }

  private async load(callId: string): Promise<StoredResult | undefined> {
    const raw = await this.store.get(this.key(callId));
    return raw === undefined ? undefined : (JSON.parse(raw) as StoredResult);
  }
}

/** The start of the UTF-8 character at or before `i`. */
function charStart(buf: Buffer, i: number): number {
  while (i > 0 && i < buf.length && ((buf[i] ?? 0) & 0xc0) === 0x80) i--;
  return i;
}

/** The end of the UTF-8 character starting at `i`. */
function charEnd(buf: Buffer, i: number): number {
  let j = i + 1;
  while (j < buf.length && ((buf[j] ?? 0) & 0xc0) === 0x80) j++;
  return j;
}
