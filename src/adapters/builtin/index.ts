import { sleep, type Cancel } from '../../util/cancel.js';
import type { AdapterRequest, ToolAdapter, UpstreamPayload } from '../types.js';
import { GatewayError } from '../../errors.js';

type Builtin = (args: Readonly<Record<string, unknown>>, cancel: Cancel) => Promise<UpstreamPayload>;

/** In-process tools shipped with the gateway, for link tests and demos. */
const BUILTINS: Readonly<Record<string, Builtin>> = {
  /** Answers with its own arguments. */
  echo: async (args) => ({ kind: 'json', data: args }),
  /** Waits `ms` milliseconds (abortable), then answers with its arguments: shows timeouts at work. */
  delay: async (args, cancel) => {
    const ms = typeof args['ms'] === 'number' ? args['ms'] : 0;
    await sleep(ms, cancel);
    return { kind: 'json', data: args };
  },
};

export const BUILTIN_NAMES: readonly string[] = Object.keys(BUILTINS);

export class BuiltinAdapter implements ToolAdapter {
  async call(req: AdapterRequest): Promise<UpstreamPayload> {
    if (req.backend.target.kind !== 'builtin') throw new Error('BuiltinAdapter got a non-builtin backend');
    const fn = BUILTINS[req.backend.target.name];
    if (!fn) throw new GatewayError('UNAVAILABLE', `no builtin named '${req.backend.target.name}'`);
    return fn(req.args, req.cancel);
  }
}
