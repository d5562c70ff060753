import { sleep } from '../../util/cancel.js';
import type { AdapterRequest, ToolAdapter, UpstreamPayload } from '../types.js';
import { GatewayError } from '../../errors.js';
import { systemLookup, type LookupAll } from '../../guards/url.js';
import { PinnedFetch } from './fetch.js';

type Builtin = (req: AdapterRequest, fetcher: PinnedFetch) => Promise<UpstreamPayload>;

/** In-process tools shipped with the gateway, for link tests and demos. */
const BUILTINS: Readonly<Record<string, Builtin>> = {
  /** Answers with its own arguments. */
  echo: async ({ args }) => ({ kind: 'json', data: args }),
  /** Waits `ms` milliseconds (abortable), then answers with its arguments: shows timeouts at work. */
  delay: async ({ args, cancel }) => {
    const ms = typeof args['ms'] === 'number' ? args['ms'] : 0;
    await sleep(ms, cancel);
    return { kind: 'json', data: args };
  },
  /** GETs the `url` argument from the gateway, on connections pinned to checked addresses (fetch.ts). */
  fetch: (req, fetcher) => fetcher.fetch(req),
};

export const BUILTIN_NAMES: readonly string[] = Object.keys(BUILTINS);

export interface BuiltinOptions {
  /** The resolver of `builtin: fetch` (tests give a real resolver of their own). */
  readonly lookup?: LookupAll | undefined;
  readonly maxResponseBytes?: number;
}

export class BuiltinAdapter implements ToolAdapter {
  private readonly fetcher: PinnedFetch;

  constructor(opts: BuiltinOptions = {}) {
    this.fetcher = new PinnedFetch(opts.lookup ?? systemLookup, opts.maxResponseBytes ?? 1_048_576);
  }

  async call(req: AdapterRequest): Promise<UpstreamPayload> {
    if (req.backend.target.kind !== 'builtin') throw new Error('BuiltinAdapter got a non-builtin backend');
    const fn = BUILTINS[req.backend.target.name];
    if (!fn) throw new GatewayError('UNAVAILABLE', `no builtin named '${req.backend.target.name}'`);
    return fn(req, this.fetcher);
  }

  async close(): Promise<void> {
    await this.fetcher.close();
  }
}
