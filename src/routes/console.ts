import { existsSync, readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ConsoleOidcSettings } from '../config/console-oidc.js';

/**
 * The approvals console: a static page (HTML, one script, one stylesheet) that needs no key to
 * load; its script calls the /v1 API of the same origin with the key the approver types in.
 * The files are read once, at registration, from a fixed list: no path from a request ever
 * reaches the file system. /console/config.json tells the page whether it may offer
 * "Sign in with <issuer>" (a public client: there is no secret to tell).
 */

/**
 * Exactly what the page needs: its own files and same-origin fetches, no inline code, no framing;
 * with a sign-in issuer, fetches to that issuer's origin too (discovery and the token endpoint).
 */
export function consoleCsp(connectOrigins: readonly string[] = []): string {
  const connect = ["'self'", ...connectOrigins].join(' ');
  return (
    `default-src 'self'; script-src 'self'; style-src 'self'; connect-src ${connect}; img-src 'self' data:; ` +
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
  );
}
export const CONSOLE_CSP = consoleCsp();

const FILES = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'oidc.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
} as const;
type AssetName = keyof typeof FILES;

/** Next to the compiled module (dist/console/assets after the build's copy step; src/ in tests), else the checkout's src/. */
function assetsDir(): URL {
  const candidates = [new URL('../console/assets/', import.meta.url), new URL('../../src/console/assets/', import.meta.url)];
  for (const u of candidates) if (existsSync(new URL('index.html', u))) return u;
  throw new Error(`console: assets not found next to ${new URL('.', import.meta.url).pathname}`);
}

interface Asset {
  body: Buffer;
  type: string;
}

function loadAssets(): Map<AssetName, Asset> {
  const dir = assetsDir();
  const out = new Map<AssetName, Asset>();
  for (const [name, type] of Object.entries(FILES) as [AssetName, string][]) out.set(name, { body: readFileSync(new URL(name, dir)), type });
  return out;
}

export interface ConsoleRouteOptions {
  oidc?: ConsoleOidcSettings | undefined;
}

export async function consoleRoutes(app: FastifyInstance, opts: ConsoleRouteOptions): Promise<void> {
  const assets = loadAssets();
  const csp = consoleCsp(opts.oidc ? [new URL(opts.oidc.issuer).origin] : []);
  const pageConfig = Buffer.from(JSON.stringify({ oidc: opts.oidc ?? null }));
  const headers = (reply: FastifyReply) =>
    reply
      .header('content-security-policy', csp)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('x-frame-options', 'DENY')
      .header('cross-origin-opener-policy', 'same-origin')
      .header('cache-control', 'no-cache');
  const send = (reply: FastifyReply, name: AssetName) => {
    const a = assets.get(name);
    if (!a) throw new Error(`console: ${name} not loaded`);
    return headers(reply).type(a.type).send(a.body);
  };
  const hidden = { schema: { hide: true } };
  // Absolute asset URLs in index.html, so /console and /console/ both work.
  app.get('/console', hidden, (_req, reply) => send(reply, 'index.html'));
  app.get('/console/', hidden, (_req, reply) => send(reply, 'index.html'));
  app.get('/console/app.js', hidden, (_req, reply) => send(reply, 'app.js'));
  app.get('/console/oidc.js', hidden, (_req, reply) => send(reply, 'oidc.js'));
  app.get('/console/app.css', hidden, (_req, reply) => send(reply, 'app.css'));
  app.get('/console/config.json', hidden, (_req, reply) => headers(reply).type('application/json; charset=utf-8').send(pageConfig));
}
