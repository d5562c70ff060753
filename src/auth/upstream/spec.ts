import { isIP } from 'node:net';
import { strictUrl } from '../../guards/url.js';
import { isSecretName } from '../../cli/secrets.js';
import type { CredentialsFile } from '../../tools/credentials-schema.js';

/** One OAuth client of the gateway at one token endpoint. */
export interface TokenClient {
  readonly tokenUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly scope: string | undefined;
  readonly audience: string | undefined;
  readonly authMethod: 'client_secret_basic' | 'client_secret_post';
}

/** The compiled `credentials:` of a backend or MCP server. */
export type UpstreamCredentials =
  | { readonly kind: 'clientCredentials'; readonly client: TokenClient }
  | { readonly kind: 'tokenExchange'; readonly client: TokenClient & { readonly audience: string } }
  | { readonly kind: 'passthrough' };

type Problem = (path: string, message: string) => void;

const ENV_ONLY = /^\$\{env:[A-Za-z_][A-Za-z0-9_]*\}$/;

/** A token endpoint must be unambiguous, carry no credentials, and be https unless it is on this host. */
export function tokenUrlProblem(raw: string): string | undefined {
  const parsed = strictUrl(raw);
  if ('problem' in parsed) return parsed.problem;
  const u = parsed.url;
  if (u.hash) return 'the token endpoint URL may not carry a fragment';
  // A query is fine (Azure AD B2C names its policy with ?p=), a secret in it is not: URLs get logged.
  for (const name of u.searchParams.keys()) if (isSecretName(name)) return `the token endpoint URL may not carry '${name}' in its query: secrets go in the request body`;
  if (u.protocol === 'https:') return undefined;
  return isLoopback(u.hostname) ? undefined : 'the token endpoint must be https (http only to a loopback address): the client secret and tokens travel on it';
}

function isLoopback(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '');
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  return h === '::1';
}

/** Turns a validated `credentials:` into its compiled form; problems go to `problem` under `path`. */
export function compileCredentials(file: CredentialsFile, path: string, problem: Problem): UpstreamCredentials | undefined {
  if ('passthrough' in file) return { kind: 'passthrough' };
  if ('clientCredentials' in file) {
    const client = tokenClient(file.clientCredentials, `${path}/clientCredentials`, problem);
    return client && { kind: 'clientCredentials', client };
  }
  const client = tokenClient(file.tokenExchange, `${path}/tokenExchange`, problem);
  return client && { kind: 'tokenExchange', client: { ...client, audience: file.tokenExchange.audience } };
}

type ClientFile = { tokenUrl: string; clientId: string; clientSecret: string; scope?: string | undefined; audience?: string | undefined; authMethod?: TokenClient['authMethod'] | undefined };

function tokenClient(c: ClientFile, path: string, problem: Problem): TokenClient | undefined {
  const bad = tokenUrlProblem(c.tokenUrl);
  if (bad) {
    problem(`${path}/tokenUrl`, bad);
    return undefined;
  }
  return { tokenUrl: c.tokenUrl, clientId: c.clientId, clientSecret: c.clientSecret, scope: c.scope, audience: c.audience, authMethod: c.authMethod ?? 'client_secret_basic' };
}

/**
 * Pointers (under `at`) of client secrets written as literals in a file as written (before
 * `${env:...}` expansion): a secret must come from the environment, never from the file.
 */
export function literalClientSecrets(credentials: unknown, at: string): string[] {
  if (credentials === null || typeof credentials !== 'object') return [];
  const out: string[] = [];
  for (const kind of ['clientCredentials', 'tokenExchange']) {
    const c = (credentials as Record<string, unknown>)[kind];
    if (c === null || typeof c !== 'object') continue;
    const secret = (c as Record<string, unknown>)['clientSecret'];
    if (typeof secret === 'string' && !ENV_ONLY.test(secret)) out.push(`${at}/${kind}/clientSecret`);
  }
  return out;
}

export const LITERAL_SECRET_MESSAGE = 'clientSecret must be written as ${env:NAME} (the whole value): a secret in the file would be read by anyone who reads tools.d';
