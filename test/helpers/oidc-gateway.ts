import type { LightMyRequestResponse } from 'fastify';
import { echoTool, startGateway, type TestGateway, type TestGatewayOptions } from './app.js';
import type { TestIssuer } from './issuer.js';

/** Echo tools in two families, to see which a token's globs let through. */
export const OIDC_TOOLS = {
  'weather-now.yaml': echoTool('weather.now'),
  'weather-week.yaml': echoTool('weather.week'),
  'files-read.yaml': echoTool('files.read'),
};

export const API_KEY = 'oidc-test-api-key-0001';

/** An issuer entry for the config, pointing at a test issuer. */
export function issuerEntry(issuer: TestIssuer, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { issuer: issuer.url, audience: issuer.audience, algorithms: ['RS256', 'ES256'], clockSkewSeconds: 5, fetchTimeoutMs: 500, ...extra };
}

/** A gateway with one API key (agent-1, every tool) and the given issuers. */
export function startOidcGateway(issuers: Record<string, unknown>[], opts: TestGatewayOptions = {}): Promise<TestGateway> {
  return startGateway({
    tools: OIDC_TOOLS,
    ...opts,
    config: { auth: { keys: [{ id: 'agent-1', key: API_KEY, roles: ['agent'] }], oidc: issuers }, ...opts.config },
  });
}

export function listTools(gw: TestGateway, bearer: string): Promise<LightMyRequestResponse> {
  return gw.app.inject({ method: 'GET', url: '/v1/tools', headers: { authorization: `Bearer ${bearer}` } });
}

export function toolNames(res: LightMyRequestResponse): string[] {
  return (res.json() as { tools: { name: string }[] }).tools.map((t) => t.name).sort();
}

/** The reason of a refused token's 401. */
export function reasonOf(res: LightMyRequestResponse): string | undefined {
  const body = res.json() as { error?: { details?: { reason?: string }[] } };
  return body.error?.details?.[0]?.reason;
}
