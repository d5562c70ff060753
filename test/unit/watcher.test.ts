import { afterEach, describe, expect, it, vi } from 'vitest';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ToolsWatcher, relevant } from '../../src/tools/watcher.js';
import { InFlight } from '../../src/util/in-flight.js';

/** A reload stand-in that the test ends by hand, recording how many ran and how many at once. */
function gatedReload() {
  const state = { started: 0, running: 0, maxRunning: 0 };
  const gates: (() => void)[] = [];
  const startWaiters: (() => void)[] = [];
  return {
    state,
    reload: () =>
      new Promise<void>((resolve) => {
        state.started++;
        state.running++;
        state.maxRunning = Math.max(state.maxRunning, state.running);
        gates.push(() => {
          state.running--;
          resolve();
        });
        startWaiters.splice(0).forEach((w) => w());
      }),
    /** Resolves once `n` reloads have started. */
    started: (n: number) => new Promise<void>((resolve) => (state.started >= n ? resolve() : startWaiters.push(() => state.started >= n && resolve()))),
    finishOne: () => gates.shift()?.(),
  };
}

describe('ToolsWatcher', () => {
  let watcher: ToolsWatcher | undefined;
  afterEach(async () => watcher?.stop());

  it('reloads on real file events in the directory, one reload at a time', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-watch-'));
    const r = gatedReload();
    watcher = new ToolsWatcher({ dir, debounceMs: 20, reload: r.reload });
    watcher.start();
    // The watch is armed asynchronously: write until the first reload starts.
    const first = r.started(1);
    for (let i = 0; r.state.started === 0; i++) {
      writeFileSync(join(dir, `burst-${i % 50}.yaml`), `n: ${i}`);
      await Promise.race([first, new Promise((res) => setTimeout(res, 5))]);
    }
    await first;
    // Changes while the first reload runs: many events, one more reload, not yet started.
    for (let i = 0; i < 30; i++) writeFileSync(join(dir, `during-${i}.yaml`), 'x: 1');
    const second = r.started(2);
    r.finishOne();
    await second;
    expect(r.state.maxRunning).toBe(1);
    r.finishOne();
    await watcher.stop();
    expect(r.state.started).toBe(2);
    expect(r.state.maxRunning).toBe(1);
  });

  it('waits for a missing directory, reports it once, and loads it when it appears', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'toolgate-watch-')), 'later.d');
    const r = gatedReload();
    const errors: string[] = [];
    watcher = new ToolsWatcher({ dir, debounceMs: 10, retryMs: 10, reload: r.reload, onError: (_e, where) => errors.push(where) });
    watcher.start();
    const first = r.started(1);
    mkdirSync(dir);
    writeFileSync(join(dir, 'a.yaml'), 'n: 1');
    await first;
    r.finishOne();
    await watcher.stop();
    expect(errors).toEqual(['watch']);
  });

  it('debounces by hand-fed events: one reload per burst, one more for a burst during a reload, never two at once', async () => {
    vi.useFakeTimers();
    try {
      const r = gatedReload();
      const w = new ToolsWatcher({ dir: '/nonexistent', debounceMs: 100, reload: r.reload });
      for (let i = 0; i < 200; i++) w.notify();
      vi.advanceTimersByTime(99);
      expect(r.state.started).toBe(0);
      vi.advanceTimersByTime(1);
      expect(r.state.started).toBe(1);
      for (let i = 0; i < 50; i++) w.notify();
      vi.advanceTimersByTime(100); // the second burst settles while the first reload still runs
      expect(r.state.started).toBe(1);
      r.finishOne();
      await vi.waitFor(() => expect(r.state.started).toBe(2));
      r.finishOne();
      await w.stop();
      expect(r.state).toMatchObject({ started: 2, maxRunning: 1 });
    } finally {
      vi.useRealTimers();
    }
  });

  it('reloads at least every maxWaitMs while changes never stop', async () => {
    vi.useFakeTimers();
    try {
      const r = gatedReload();
      const w = new ToolsWatcher({ dir: '/nonexistent', debounceMs: 100, maxWaitMs: 1000, reload: r.reload });
      for (let t = 0; t < 999; t += 50) {
        w.notify();
        vi.advanceTimersByTime(50);
      }
      expect(r.state.started).toBe(1);
      r.finishOne();
      await w.stop();
    } finally {
      vi.useRealTimers();
    }
  });

  it('reloads for tool files and a ConfigMap swap, not for editor swap files, backups or temp files', () => {
    for (const name of ['a.yaml', 'a.yml', 'a.json', '..data', '..data_tmp', null]) expect(relevant(name)).toBe(true);
    for (const name of ['.a.yaml.swp', 'a.yaml~', '~a.yaml', 'a.yaml.tmp', '4913', 'notes.txt']) expect(relevant(name)).toBe(false);
  });
});

describe('InFlight', () => {
  it('resolves idle when the last unit leaves, or false at the bound', async () => {
    const f = new InFlight();
    expect(await f.idle(0)).toBe(true);
    const a = f.enter();
    const b = f.enter();
    expect(await f.idle(1)).toBe(false);
    const idle = f.idle(10_000);
    a();
    a(); // leaving twice counts once
    expect(f.count).toBe(1);
    b();
    expect(await idle).toBe(true);
    expect(f.count).toBe(0);
  });
});
