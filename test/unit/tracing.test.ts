import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { Tracing } from '../../src/tracing/index.js';

function load(text: string, env: Record<string, string> = {}) {
  const file = join(mkdtempSync(join(tmpdir(), 'toolgate-tracing-')), 'gateway.yaml');
  writeFileSync(file, text);
  return loadConfig({ file, env }).config;
}

describe('tracing config', () => {
  it('is off by default, with an OTLP/HTTP endpoint on loopback', () => {
    const { tracing } = load('{}\n');
    expect(tracing).toEqual({
      enabled: false,
      endpoint: 'http://127.0.0.1:4318/v1/traces',
      serviceName: 'toolgate',
      sampleRatio: 1,
      headers: {},
      exportDelayMs: 5000,
      exportTimeoutMs: 10000,
    });
    expect(Tracing.create(tracing)).toBeUndefined();
  });

  it('TOOLGATE_OTLP_ENDPOINT turns it on at that endpoint', () => {
    const { tracing } = load('tracing: { serviceName: edge }\n', { TOOLGATE_OTLP_ENDPOINT: 'http://collector:4318/v1/traces' });
    expect(tracing).toMatchObject({ enabled: true, endpoint: 'http://collector:4318/v1/traces', serviceName: 'edge' });
  });

  it('rejects a ratio outside [0, 1] and unknown keys', () => {
    expect(() => load('tracing: { sampleRatio: 2 }\n')).toThrow();
    expect(() => load('tracing: { exporter: grpc }\n')).toThrow();
  });

  it('puts the call span under the incoming traceparent and gives each attempt its own traceparent', async () => {
    const tracing = Tracing.create({ ...load('{}\n').tracing, enabled: true, endpoint: 'http://127.0.0.1:9/v1/traces' })!;
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const call = tracing.startCall({ toolName: 't', caller: { id: 'me' }, headers: { traceparent: `00-${traceId}-b7ad6b7169203331-01` } }, 'c_1');
    const tool = { name: 't' } as never;
    const backend = { id: 'b', target: { kind: 'http' } } as never;
    const attempt = tracing.startAttempt(call.context, { tool, backend, attempt: 1, breakerState: 'closed', previous: undefined });
    const headers = attempt.headers();
    expect(headers['traceparent']).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    expect(headers['traceparent']).not.toContain('b7ad6b7169203331');
    attempt.ok();
    call.end({ attempts: 1, tried: ['b'] }, 'b');
    await tracing.close(); // bounded, even with nothing listening at the endpoint
  });
});
