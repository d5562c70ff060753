import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadToolText, type LoadContext } from '../../src/tools/loader.js';
import { loadConfig } from '../../src/config/load.js';

/** `credentials:` in tool and MCP server files: what loads, and what is refused at load time with a pointer to the field. */
const defaults = loadConfig({ file: 'config/gateway.yaml', env: {} }).config.defaults;
const env = { SECRET: 's3cret-value-123' };
const ctx = (): LoadContext => ({ dir: '/t', env, secrets: new Set(), defaults });
const load = (value: unknown) => loadToolText('/t/x.yaml', stringify(value), ctx());

const TOKEN_URL = 'https://idp.example.com/oauth/token';
const cc = (over: Record<string, unknown> = {}) => ({ clientCredentials: { tokenUrl: TOKEN_URL, clientId: 'gw', clientSecret: '${env:SECRET}', ...over } });
const tx = (over: Record<string, unknown> = {}) => ({ tokenExchange: { tokenUrl: TOKEN_URL, clientId: 'gw', clientSecret: '${env:SECRET}', audience: 'https://api.example.com', ...over } });
const tool = (credentials: unknown, extra: Record<string, unknown> = {}, backend: Record<string, unknown> = { http: { url: 'https://api.example.com/x' } }) => ({
  name: 'api.x',
  description: 'x',
  sideEffect: 'read',
  backends: [{ id: 'b', ...backend, credentials }],
  ...extra,
});
const server = (credentials: unknown) => ({ kind: 'mcp-server', name: 'remote', transport: 'streamable-http', url: 'https://mcp.example.com/mcp', credentials });
const paths = (r: { problems: { path: string }[] }) => r.problems.map((p) => p.path);

describe('credentials in tool files', () => {
  it('loads the three modes on an HTTP backend, the secret from the environment (and recorded as a secret)', () => {
    const c = ctx();
    for (const creds of [cc({ scope: 'a b', audience: 'https://api.example.com' }), tx(), { passthrough: true }]) {
      const r = loadToolText('/t/x.yaml', stringify(tool(creds)), c);
      expect(r.problems).toEqual([]);
      const target = r.tools[0]!.backends[0]!.target;
      expect(target.kind === 'http' && target.credentials?.kind).toBe(Object.keys(creds)[0]);
    }
    expect(c.secrets.has('s3cret-value-123')).toBe(true);
    const t = load(tool(cc())).tools[0]!.backends[0]!.target;
    expect(t.kind === 'http' && t.credentials?.kind === 'clientCredentials' && t.credentials.client.authMethod).toBe('client_secret_basic');
  });

  it('refuses a client secret written in the file, even partly', () => {
    for (const secret of ['literal-secret', 'pre${env:SECRET}', '${env:SECRET}${env:SECRET}']) {
      const r = load(tool(cc({ clientSecret: secret })));
      expect(paths(r)).toEqual(['/backends/0/credentials/clientCredentials/clientSecret']);
      expect(r.problems[0]!.message).toMatch(/\$\{env:NAME\}/);
      expect(JSON.stringify(r.problems)).not.toContain('literal-secret');
    }
    expect(paths(load(tool(tx({ clientSecret: 'x' }))))).toEqual(['/backends/0/credentials/tokenExchange/clientSecret']);
  });

  it('refuses a token endpoint that is plain http off this host, ambiguous, or carries credentials', () => {
    for (const tokenUrl of ['http://idp.example.com/token', 'https://user:pw@idp.example.com/token', 'https://idp.example.com\\@evil/token', 'http://0x7f.1/token', 'https://idp.example.com/token?client_secret=x']) {
      expect(paths(load(tool(cc({ tokenUrl })))), tokenUrl).toEqual(['/backends/0/credentials/clientCredentials/tokenUrl']);
    }
    expect(paths(load(tool(cc({ tokenUrl: 'https://idp.example.com/token#x' }))))).toEqual(['/backends/0/credentials/clientCredentials/tokenUrl']);
    for (const tokenUrl of ['http://127.0.0.1:8080/token', 'http://localhost/token', 'http://[::1]:9/token', 'https://t.b2clogin.com/t/oauth2/v2.0/token?p=b2c_1_signin']) {
      expect(load(tool(cc({ tokenUrl }))).problems, tokenUrl).toEqual([]);
    }
  });

  it('refuses passthrough: false, an unknown mode, two modes at once, and tokenExchange without audience (passthrough: true loads)', () => {
    expect(load(tool({ passthrough: true })).problems).toEqual([]);
    expect(load(tool({ passthrough: false })).problems.length).toBeGreaterThan(0);
    expect(load(tool({ static: true })).problems.length).toBeGreaterThan(0);
    expect(load(tool({ ...cc(), passthrough: true })).problems.length).toBeGreaterThan(0);
    const noAud = tx();
    delete (noAud.tokenExchange as Record<string, unknown>)['audience'];
    expect(load(tool(noAud)).problems.length).toBeGreaterThan(0);
  });

  it('refuses credentials on a builtin or MCP backend, and beside a static Authorization header', () => {
    expect(paths(load(tool(cc(), {}, { builtin: 'echo' })))).toEqual(['/backends/0/credentials']);
    expect(paths(load(tool(cc(), {}, { mcp: { server: 's', tool: 't' } })))).toEqual(['/backends/0/credentials']);
    const both = load(tool(cc(), {}, { http: { url: 'https://api.example.com/x', headers: { Authorization: 'Bearer ${env:SECRET}' } } }));
    expect(paths(both)).toEqual(['/backends/0/http/headers/authorization']);
  });

  it("refuses the shared result cache on a tool that acts for the caller (another caller's result would be served)", () => {
    for (const creds of [tx(), { passthrough: true }]) {
      expect(paths(load(tool(creds, { cache: { ttlSeconds: 60 } })))).toEqual(['/cache/ttlSeconds']);
      expect(paths(load(tool(creds, { fallback: { cache: true } })))).toEqual(['/fallback/cache']);
    }
    expect(load(tool(cc(), { cache: { ttlSeconds: 60 } })).problems).toEqual([]);
  });
});

describe('credentials in MCP server files', () => {
  it('loads clientCredentials on a Streamable HTTP or SSE server', () => {
    expect(load(server(cc())).problems).toEqual([]);
    expect(load({ ...server(cc()), transport: 'sse' }).problems).toEqual([]);
  });

  it('refuses tokenExchange and passthrough (one pooled session is shared by every caller), saying why', () => {
    for (const [creds, kind] of [[tx(), 'tokenExchange'], [{ passthrough: true }, 'passthrough']] as const) {
      const r = load(server(creds));
      expect(paths(r)).toEqual([`/credentials/${kind}`]);
      expect(r.problems[0]!.message).toMatch(/shared by every caller/);
    }
  });

  it('refuses a literal secret, a bad token endpoint, and credentials on a stdio server', () => {
    expect(paths(load(server(cc({ clientSecret: 'plain' }))))).toEqual(['/credentials/clientCredentials/clientSecret']);
    expect(paths(load(server(cc({ tokenUrl: 'http://idp.example.com/t' }))))).toEqual(['/credentials/clientCredentials/tokenUrl']);
    expect(load({ kind: 'mcp-server', name: 'local', transport: 'stdio', command: 'node', credentials: cc() }).problems.length).toBeGreaterThan(0);
  });
});
