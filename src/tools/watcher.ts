import { existsSync } from 'node:fs';
import { watch } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { TOOL_FILE } from './loader.js';

/**
 * Events worth a reload: tool files, an unknown name (some platforms give none), and Kubernetes'
 * atomic writer (a mounted ConfigMap changes by swapping its `..data` symlink). Editor swap
 * files, backups and temp files are not tools.
 */
export function relevant(filename: string | null): boolean {
  return filename === null || TOOL_FILE.test(filename) || filename.startsWith('..');
}

export interface ToolsWatcherOptions {
  readonly dir: string;
  /** Builds and swaps in the next registry generation. Never called twice at once by the watcher. */
  readonly reload: () => Promise<unknown>;
  /** Quiet time that ends a burst of events. */
  readonly debounceMs: number;
  /** A burst that never goes quiet still reloads this often. */
  readonly maxWaitMs?: number;
  /** A failed reload or a broken watch (the loop re-arms itself after `retryMs`). */
  readonly onError?: (err: unknown, where: 'reload' | 'watch') => void;
  readonly retryMs?: number;
}

/**
 * Watches tools.d and reloads after each burst of changes: 200 files written at once make one
 * reload (or a few), never 200. Reloads run one at a time; a change seen during a reload
 * schedules exactly one more after it, so the last event always leads to a reload that sees the
 * final contents. A half-written file is therefore settled by the writes that finish it (each
 * write is an event); meanwhile the loader keeps its last good version serving.
 */
export class ToolsWatcher {
  private readonly abort = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private burstStarted = 0;
  private running: Promise<void> | undefined;
  private again = false;
  private loop: Promise<void> | undefined;
  /** Subfolders of tools.d holding OpenAPI documents (`spec:`), each watched for those files only. */
  private readonly extra = new Map<string, { names: Set<string>; abort: AbortController; loop: Promise<void> }>();

  constructor(private readonly opts: ToolsWatcherOptions) {}

  /**
   * The documents the openapi files read: a change to one reloads as a change to a tool file
   * does. Those in tools.d itself are seen already; each other folder gets a watch of its own.
   */
  watchFiles(paths: readonly string[]): void {
    if (this.abort.signal.aborted) return;
    const root = resolve(this.opts.dir);
    const wanted = new Map<string, Set<string>>();
    for (const p of paths) {
      const dir = dirname(resolve(p));
      if (dir === root) continue;
      wanted.set(dir, (wanted.get(dir) ?? new Set()).add(basename(p)));
    }
    for (const [dir, w] of this.extra) {
      if (wanted.has(dir)) continue;
      w.abort.abort();
      this.extra.delete(dir);
    }
    for (const [dir, names] of wanted) {
      const w = this.extra.get(dir);
      if (w) {
        w.names = names;
        continue;
      }
      const abort = new AbortController();
      const entry = { names, abort, loop: Promise.resolve() };
      entry.loop = this.watchExtra(dir, entry, abort.signal);
      this.extra.set(dir, entry);
    }
  }

  private async watchExtra(dir: string, entry: { names: Set<string> }, signal: AbortSignal): Promise<void> {
    let failures = 0;
    while (!signal.aborted && !this.abort.signal.aborted) {
      if (failures > 0 && existsSync(dir)) this.notify(); // the folder is back: its documents may be new
      try {
        for await (const ev of watch(dir, { signal, persistent: false })) {
          failures = 0;
          if (ev.filename === null || entry.names.has(ev.filename) || ev.filename.startsWith('..')) this.notify();
        }
      } catch {
        if (signal.aborted) return;
      }
      failures++;
      await sleep(Math.min((this.opts.retryMs ?? 1000) * 2 ** (failures - 1), 30_000), undefined, { signal }).catch(() => undefined);
    }
  }

  start(): void {
    this.loop ??= this.watchLoop();
  }

  /** Stops watching and waits for a reload in progress to end. */
  async stop(): Promise<void> {
    this.abort.abort();
    for (const w of this.extra.values()) w.abort.abort();
    await Promise.all([...this.extra.values()].map((w) => w.loop));
    this.extra.clear();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.loop;
    await this.running;
  }

  private async watchLoop(): Promise<void> {
    const { signal } = this.abort;
    let failures = 0;
    while (!signal.aborted) {
      // Re-armed after an outage (directory missing, gone or replaced): load what is there now.
      if (failures > 0 && existsSync(this.opts.dir)) this.notify();
      try {
        for await (const ev of watch(this.opts.dir, { signal, persistent: false })) {
          failures = 0;
          if (relevant(ev.filename)) this.notify();
        }
      } catch (e) {
        if (signal.aborted) return;
        if (failures === 0) this.opts.onError?.(e, 'watch');
      }
      failures++;
      const wait = Math.min((this.opts.retryMs ?? 1000) * 2 ** (failures - 1), 30_000);
      await sleep(wait, undefined, { signal }).catch(() => undefined);
    }
  }

  /** Something in the directory changed: reload after the burst (trailing debounce, bounded by maxWaitMs). */
  notify(): void {
    if (this.abort.signal.aborted) return;
    const now = Date.now();
    if (this.timer === undefined) this.burstStarted = now;
    else clearTimeout(this.timer);
    const maxWait = this.opts.maxWaitMs ?? 10 * Math.max(this.opts.debounceMs, 50);
    const wait = Math.max(0, Math.min(this.opts.debounceMs, this.burstStarted + maxWait - now));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.fire();
    }, wait);
  }

  private fire(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.runReloads().finally(() => {
      this.running = undefined;
    });
  }

  private async runReloads(): Promise<void> {
    do {
      this.again = false;
      try {
        await this.opts.reload();
      } catch (e) {
        this.opts.onError?.(e, 'reload');
      }
    } while (this.again && !this.abort.signal.aborted);
  }
}
