import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureClients } from '../helpers/clients.js';
import { CONFORMANCE_VERSION, listClientScenarios, runClientScenario, writeTable, type ClientRun, type TableRow } from '../helpers/conformance.js';

/**
 * The MCP conformance suite's client scenarios with toolgate's pool as the client under test: the
 * driver (test/clients/drivers/conformance-toolgate.mjs) starts a toolgate whose tools.d declares
 * the suite's test server, waits for the import, and lists, calls and answers elicitations through
 * toolgate's /mcp. Every scenario that can apply to a gateway's upstream client must pass; the
 * others are listed below with why, and a scenario the suite adds that is in neither list fails
 * the run. The table goes to test-results/conformance/client.{md,json}.
 */
const RUN = ['initialize', 'tools_call', 'elicitation-sep1034-client-defaults', 'sse-retry', 'auth/client-credentials-basic'];

const AUTH_CODE = 'authorization-code flow (browser redirect, PKCE, dynamic or metadata-document client registration): the pool has no user to sign in, its upstream OAuth is clientCredentials with a configured token URL';
const NOT_APPLICABLE: Record<string, string> = {
  'auth/metadata-default': AUTH_CODE,
  'auth/metadata-var1': AUTH_CODE,
  'auth/metadata-var2': AUTH_CODE,
  'auth/metadata-var3': AUTH_CODE,
  'auth/basic-cimd': AUTH_CODE,
  'auth/scope-from-www-authenticate': `${AUTH_CODE}; a clientCredentials scope is configured, not read from WWW-Authenticate`,
  'auth/scope-from-scopes-supported': `${AUTH_CODE}; a clientCredentials scope is configured, not read from scopes_supported`,
  'auth/scope-omitted-when-undefined': AUTH_CODE,
  'auth/scope-step-up': `${AUTH_CODE}; no per-operation re-authorization (a 401 gets one fresh token, a 403 is not a step-up)`,
  'auth/scope-retry-limit': AUTH_CODE,
  'auth/token-endpoint-auth-basic': AUTH_CODE,
  'auth/token-endpoint-auth-post': AUTH_CODE,
  'auth/token-endpoint-auth-none': `${AUTH_CODE}; a public client has no client credentials`,
  'auth/pre-registration': AUTH_CODE,
  'auth/2025-03-26-oauth-metadata-backcompat': `${AUTH_CODE} (2025-03-26 discovery)`,
  'auth/2025-03-26-oauth-endpoint-fallback': `${AUTH_CODE} (2025-03-26 default endpoints)`,
  'auth/resource-mismatch': 'checks discovery the pool does not do (the token URL is configured; RFC 9728 resource metadata is never read)',
  'auth/offline-access-scope': `${AUTH_CODE}; client credentials get no refresh token`,
  'auth/offline-access-not-supported': `${AUTH_CODE}; client credentials get no refresh token`,
  'auth/client-credentials-jwt': 'private_key_jwt: toolgate authenticates to token endpoints with client_secret_basic or client_secret_post only',
  'auth/cross-app-access-complete-flow': "SEP-990 (ID-JAG token exchange + JWT bearer grant): toolgate's tokenExchange is for HTTP backends, and MCP server files take clientCredentials only",
};

describe(`MCP conformance suite ${CONFORMANCE_VERSION}, client scenarios: toolgate's pool as the client`, () => {
  const runs = new Map<string, ClientRun>();
  let listed: string[] = [];

  beforeAll(async () => {
    await ensureClients();
    listed = await listClientScenarios();
  }, 600_000);

  afterAll(() => {
    const rows: TableRow[] = listed.map((s) => {
      const r = runs.get(s);
      const result = r ? (r.ok ? 'pass' : `FAIL (${r.failed}/${r.passed + r.failed})`) : NOT_APPLICABLE[s] ? `not applicable: ${NOT_APPLICABLE[s]}` : 'not run';
      return { scenario: s, era: '', toolgate: result };
    });
    const ms = [...runs.values()].map((r) => r.ms);
    writeTable('client', ['toolgate'], rows, `@modelcontextprotocol/conformance ${CONFORMANCE_VERSION} client scenarios, toolgate's pool as the client (auth/client-credentials-basic: the driver reads the resource and authorization-server metadata to write the server file's tokenUrl, as an operator would; toolgate then gets and sends the token); runs took ${ms.join(', ')} ms`);
  });

  it('knows every client scenario of the suite: run, or not applicable with a reason', () => {
    expect(listed.length).toBeGreaterThan(20);
    expect(listed.filter((s) => !RUN.includes(s) && !(s in NOT_APPLICABLE))).toEqual([]);
    expect([...RUN, ...Object.keys(NOT_APPLICABLE)].filter((s) => !listed.includes(s))).toEqual([]);
  });

  for (const scenario of RUN) {
    it(`${scenario} passes with toolgate's pool as the client`, async () => {
      const run = await runClientScenario(scenario);
      runs.set(scenario, run);
      expect(run.ok, run.output.slice(-4000)).toBe(true);
    }, 160_000);
  }
});
