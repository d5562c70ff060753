import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { parseSource, SourceError, type FileProblem, type ParsedSource } from '../util/source.js';

export interface TextItem {
  readonly file: string;
  readonly text: string;
}

/** A file's parsed value, or the syntax problems that stop it (a plain object: it crosses threads). */
export type ParseOutcome = { readonly value: unknown } | { readonly problems: FileProblem[] };

/** Below this many files, starting a worker costs more than it saves. */
const PARALLEL_FROM = 400;
/** The main thread yields this often while parsing, so requests keep being served during a big reload. */
const YIELD_EVERY = 100;
const WORKER = new URL('./parse-worker.js', import.meta.url);

export function parseText(item: TextItem): ParseOutcome {
  try {
    return { value: parseSource(item.text, item.file).value };
  } catch (e) {
    if (e instanceof SourceError) return { problems: e.problems };
    return { problems: [{ file: item.file, path: '', message: `cannot parse: ${(e as Error).message}` }] };
  }
}

/** The outcome as a ParsedSource: line numbers, needed only to report a problem, come from a second parse. */
export function asParsedSource(item: TextItem, value: unknown): ParsedSource {
  let lines: ParsedSource | undefined;
  return { value, lineOf: (pointer) => (lines ??= parseSource(item.text, item.file)).lineOf(pointer) };
}

async function parseHere(items: readonly TextItem[]): Promise<ParseOutcome[]> {
  const out: ParseOutcome[] = [];
  for (let i = 0; i < items.length; i++) {
    if (i > 0 && i % YIELD_EVERY === 0) await new Promise((r) => setImmediate(r));
    out.push(parseText(items[i] as TextItem));
  }
  return out;
}

function parseInWorker(items: readonly TextItem[]): Promise<ParseOutcome[]> {
  return new Promise((resolve) => {
    const worker = new Worker(WORKER, { workerData: items });
    let settled = false;
    const fallback = () => {
      if (!settled) void parseHere(items).then(resolve);
      settled = true;
    };
    worker.once('message', (m: ParseOutcome[]) => {
      settled = true;
      resolve(m);
      void worker.terminate();
    });
    worker.once('error', fallback);
    worker.once('exit', fallback);
  });
}

/** A run of consecutive items and, once parsed, their outcomes in the same order. */
export interface ParseShare {
  readonly offset: number;
  readonly outcomes: Promise<ParseOutcome[]>;
}

/**
 * Parses many files (YAML parsing is most of a cold load): a few inline; many split between
 * worker threads and this thread. Shares come back in item order, this thread's first, so the
 * caller compiles it while the workers still parse theirs. Without a compiled worker script
 * (tests running the TypeScript sources) everything is parsed here.
 */
export function parseShares(items: readonly TextItem[]): ParseShare[] {
  const workers = Math.min(availableParallelism() - 1, 3);
  if (items.length < PARALLEL_FROM || workers < 1 || !existsSync(fileURLToPath(WORKER))) return [{ offset: 0, outcomes: parseHere(items) }];
  // This thread also compiles everything: it takes a smaller share than a worker.
  const mine = Math.floor((items.length * 0.4) / workers);
  const size = Math.ceil((items.length - mine) / workers);
  const shares: ParseShare[] = [];
  for (let offset = mine; offset < items.length; offset += size) shares.push({ offset, outcomes: parseInWorker(items.slice(offset, offset + size)) });
  return [{ offset: 0, outcomes: parseHere(items.slice(0, mine)) }, ...shares];
}
