import type { LookupAddress, LookupOptions } from 'node:dns';
import { Agent, request } from 'undici';
import { GatewayError } from '../../errors.js';
import { isUnsafeAnswer } from '../../guards/addresses.js';
import type { LookupAll } from '../../guards/url.js';
import type { AdapterRequest, UpstreamPayload } from '../types.js';

const SPECIAL = 'ETOOLGATE_SPECIAL_ADDRESS';
const NO_EFFECT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * The socket's own name lookup: the name is resolved once per connection, every address is
 * judged, and the socket connects to exactly the addresses judged. A DNS answer that changes
 * between the guard's check and the connection (rebinding) is judged again, here, where it counts.
 */
function checkedLookup(resolve: LookupAll, allowPrivate: boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolve(hostname)
      .then((found) => {
        const wanted = options.family === 4 || options.family === 6 ? found.filter((a) => a.family === options.family) : [...found];
        if (!allowPrivate && found.some((a) => isUnsafeAnswer(a.address))) {
          throw Object.assign(new Error(`host ${hostname} resolves to a private, loopback, metadata or special-purpose address`), { code: SPECIAL });
        }
        const first = wanted[0];
        if (!first) throw Object.assign(new Error(`host ${hostname} does not resolve`), { code: 'ENOTFOUND' });
        if (options.all) callback(null, wanted.map((a) => ({ address: a.address, family: a.family })));
        else callback(null, first.address, first.family);
      })
      .catch((e: NodeJS.ErrnoException) => callback(e, ''));
  };
}

function codeOf(e: unknown): string | undefined {
  for (let cur: unknown = e; cur instanceof Error; cur = (cur as Error & { cause?: unknown }).cause) {
    const code = (cur as NodeJS.ErrnoException).code;
    if (code === SPECIAL) return code;
    if (cur instanceof AggregateError) for (const inner of cur.errors) if (codeOf(inner) === SPECIAL) return SPECIAL;
    if (typeof code === 'string' && code !== 'UND_ERR_SOCKET') return code;
  }
  return undefined;
}

/**
 * `builtin: fetch`: the gateway itself GETs the `url` argument (checked by the tool's URL guard),
 * on sockets whose name lookup is checked and pinned as above. Redirects are not followed (the
 * answer names the Location); the body is read up to `maxBytes`, then cut.
 */
export class PinnedFetch {
  private readonly agents = new Map<boolean, Agent>();

  constructor(
    private readonly resolve: LookupAll,
    private readonly maxBytes: number,
  ) {}

  async fetch(req: AdapterRequest): Promise<UpstreamPayload> {
    const policy = req.tool.guards.find((g) => g.arg === 'url' && g.url)?.url;
    const url = req.args['url'];
    if (!policy || typeof url !== 'string') throw new GatewayError('INTERNAL', 'builtin fetch needs a string url checked by a URL guard');
    try {
      const res = await request(url, {
        method: 'GET',
        dispatcher: this.agent(policy.allowPrivate),
        signal: req.cancel.signal,
        headers: { 'x-request-id': req.requestId, 'user-agent': 'toolgate-fetch' },
      });
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        if (size + chunk.length > this.maxBytes) {
          chunks.push(chunk.subarray(0, this.maxBytes - size));
          truncated = true;
          res.body.destroy();
          break;
        }
        chunks.push(chunk);
        size += chunk.length;
      }
      const header = (name: string) => {
        const v = res.headers[name];
        return Array.isArray(v) ? v[0] : v;
      };
      const location = header('location');
      return {
        kind: 'json',
        data: {
          url,
          status: res.statusCode,
          contentType: header('content-type') ?? null,
          ...(location ? { location } : {}),
          body: Buffer.concat(chunks).toString('utf8'),
          ...(truncated ? { truncated: true } : {}),
        },
      };
    } catch (e) {
      if (req.cancel.aborted) throw req.cancel.reason as Error;
      const code = codeOf(e);
      if (code === SPECIAL) {
        throw new GatewayError('FORBIDDEN', `builtin fetch refused ${url}: its host resolves to a private or special-purpose address`, {
          modelMessage: 'The URL is not allowed: its host resolves to a private, loopback, metadata or special-purpose address. Use a public URL.',
          details: [{ path: '/url', message: 'the host resolves to a private or special-purpose address' }],
        });
      }
      const noEffect = code !== undefined && NO_EFFECT.has(code);
      throw new GatewayError(noEffect ? 'UNAVAILABLE' : 'UPSTREAM_ERROR', `the URL could not be fetched (${code ?? 'network error'})`, {
        details: [{ message: (e as Error).message, errno: code }],
        upstream: { transient: true, noEffect },
        cause: e,
      });
    }
  }

  private agent(allowPrivate: boolean): Agent {
    let a = this.agents.get(allowPrivate);
    if (!a) {
      a = new Agent({ connections: 64, connect: { lookup: checkedLookup(this.resolve, allowPrivate) } });
      this.agents.set(allowPrivate, a);
    }
    return a;
  }

  async close(): Promise<void> {
    await Promise.all([...this.agents.values()].map((a) => a.close()));
  }
}
