import { describe, expect, it } from 'vitest';
import { Cancel, sleep, type CancelListener } from '../../src/util/cancel.js';
import { pending, type Settle } from '../../src/util/settle.js';

describe('Cancel', () => {
  it('aborts once: the first reason wins, listeners run once in order, a released one never runs', () => {
    const c = new Cancel();
    const seen: string[] = [];
    c.onAbort((r) => seen.push(`a:${r.message}`));
    const release = c.onAbort(() => seen.push('released'));
    c.onAbort((r) => seen.push(`c:${r.message}`));
    release();
    expect(c.aborted).toBe(false);
    c.abort(new Error('first'));
    c.abort(new Error('second'));
    expect(c.aborted).toBe(true);
    expect(c.reason?.message).toBe('first');
    expect(seen).toEqual(['a:first', 'c:first']);
    // Registered after the fact: told at once.
    c.onAbort((r) => seen.push(`late:${r.message}`));
    expect(seen.at(-1)).toBe('late:first');
  });

  it('tells listener objects in order with function listeners; an unlistened one is not told; a late one at once', () => {
    const c = new Cancel();
    const seen: string[] = [];
    const obj = (name: string): CancelListener => ({ cancelled: (r) => seen.push(`${name}:${r.message}`) });
    const a = obj('a');
    const gone = obj('gone');
    c.listen(a);
    c.onAbort((r) => seen.push(`fn:${r.message}`));
    c.listen(gone);
    c.unlisten(gone);
    c.abort(new Error('stop'));
    c.abort(new Error('again'));
    expect(seen).toEqual(['a:stop', 'fn:stop']);
    c.listen(obj('late'));
    expect(seen.at(-1)).toBe('late:stop');
  });

  it('gives a standard AbortSignal that follows it, made before or after the abort', () => {
    const before = new Cancel();
    const signal = before.signal;
    expect(signal.aborted).toBe(false);
    const reason = new Error('deadline');
    before.abort(reason);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(reason);

    const after = new Cancel();
    after.abort(reason);
    expect(after.signal.aborted).toBe(true);
    expect(after.signal.reason).toBe(reason);
  });

  it('a child aborts with its parent, or alone after its own limit; released, it no longer follows', async () => {
    const parent = new Cancel();
    const a = parent.child(10_000, () => new Error('own limit'));
    const b = parent.child(10_000, () => new Error('own limit'));
    b.release();
    parent.abort(new Error('parent'));
    expect(a.cancel.reason?.message).toBe('parent');
    expect(b.cancel.aborted).toBe(false);
    a.release();

    const p2 = new Cancel();
    const timed = p2.child(5, () => new Error('own limit'));
    await new Promise((r) => setTimeout(r, 30));
    expect(timed.cancel.reason?.message).toBe('own limit');
    expect(p2.aborted).toBe(false);
    timed.release();
  });

  it('sleep resolves after its time, or rejects with the reason as soon as the cancel aborts', async () => {
    const c = new Cancel();
    await expect(sleep(5, c)).resolves.toBeUndefined();
    const started = Date.now();
    const waiting = sleep(10_000, c);
    setTimeout(() => c.abort(new Error('stop')), 5);
    await expect(waiting).rejects.toThrow('stop');
    expect(Date.now() - started).toBeLessThan(5_000);
    await expect(sleep(5, c)).rejects.toThrow('stop');
  });
});

describe('pending', () => {
  it('hands each promise its own settle functions, kept on the holder', async () => {
    const one: Settle<string> = { resolve: () => undefined, reject: () => undefined };
    const two: Settle<string> = { resolve: () => undefined, reject: () => undefined };
    const p1 = pending(one);
    const p2 = pending(two);
    expect(one.resolve).not.toBe(two.resolve);
    two.reject(new Error('second'));
    one.resolve('first');
    one.reject(new Error('ignored: already settled'));
    await expect(p1).resolves.toBe('first');
    await expect(p2).rejects.toThrow('second');
  });
});
