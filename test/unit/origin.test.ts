import { describe, expect, it } from 'vitest';
import { configuredOrigin, OriginPolicy, ownOrigins, type RouteTraits } from '../../src/plugins/origin.js';

const loopback = { host: '127.0.0.1', port: 8080 };
const plain: () => RouteTraits = () => ({ strict: false, privileged: false });
const privileged: () => RouteTraits = () => ({ strict: false, privileged: true });
const strict: () => RouteTraits = () => ({ strict: true, privileged: false });

describe('OriginPolicy: Host (DNS rebinding)', () => {
  const policy = new OriginPolicy([], false);
  const host = (h: string | undefined, binding = loopback) => policy.problem('GET', h === undefined ? {} : { host: h }, binding, plain);

  it('bound to loopback: a loopback Host passes, any other is refused, however often and in whatever order each is seen', () => {
    for (let i = 0; i < 3; i++) {
      expect(host('127.0.0.1:8080')).toBeUndefined();
      expect(host('evil.example:8080')).toMatch(/not a loopback name/);
      expect(host('localhost:8080')).toBeUndefined();
      expect(host('LOCALHOST')).toBeUndefined();
      expect(host('[::1]:8080')).toBeUndefined();
      expect(host('127.8.9.10:8080')).toBeUndefined();
      expect(host(undefined)).toMatch(/not a loopback name/);
      // *.localhost resolves to loopback only by convention (RFC 6761); a resolver may send it to DNS.
      expect(host('rebind.localhost:8080')).toMatch(/not a loopback name/);
      expect(host('localhost.:8080')).toMatch(/not a loopback name/);
      expect(host('127.0.0.1.evil.example')).toMatch(/not a loopback name/);
      expect(host('localhost:8080@evil.example')).toMatch(/not a loopback name/);
    }
  });

  it('gives the same verdicts past the memo of Host values (many distinct names)', () => {
    for (let i = 0; i < 600; i++) {
      expect(host(`127.0.0.${i % 250}:8080`)).toBeUndefined();
      expect(host(`evil${i}.example`)).toMatch(/not a loopback name/);
    }
  });

  it('a binding that changes is read again: on a public address any Host is fine', () => {
    expect(host('evil.example')).toMatch(/not a loopback name/);
    expect(host('gateway.example', { host: '0.0.0.0', port: 8080 })).toBeUndefined();
    expect(host('gateway.example', { host: '10.1.2.3', port: 8080 })).toBeUndefined();
    expect(host('evil.example')).toMatch(/not a loopback name/);
  });
});

describe('OriginPolicy: Origin', () => {
  const allowed = ['https://console.example.com'];
  const keyed = new OriginPolicy(allowed, false);
  const keyless = new OriginPolicy(allowed, true);
  const h = (origin?: string, extra: Record<string, string> = {}) => ({ host: '127.0.0.1:8080', ...(origin !== undefined ? { origin } : {}), ...extra });

  it('a state-changing request from a foreign, opaque or malformed Origin is refused in every auth mode; own, listed and none pass', () => {
    for (const policy of [keyed, keyless]) {
      for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
        for (const bad of ['http://evil.example', 'null', 'http://127.0.0.1:5173', 'http://localhost:3000', 'https://127.0.0.1:8080', 'http://127.0.0.1:8080/x', 'http://127.0.0.1:8080, http://evil.example', 'garbage', 'file://', 'HTTP://127.0.0.1:8080']) {
          expect(policy.problem(method, h(bad), loopback, plain), `${method} ${bad}`).toMatch(/is not allowed/);
        }
        expect(policy.problem(method, h('http://evil.example'), loopback, plain)).toContain('add it to server.allowedOrigins');
        expect(policy.problem(method, h(), loopback, plain)).toBeUndefined();
        expect(policy.problem(method, h('http://127.0.0.1:8080'), loopback, plain)).toBeUndefined();
        expect(policy.problem(method, h('http://localhost:8080'), loopback, plain)).toBeUndefined();
        expect(policy.problem(method, h('https://console.example.com'), loopback, plain)).toBeUndefined();
        expect(policy.problem(method, h(undefined, { 'sec-fetch-site': 'cross-site' }), loopback, plain)).toMatch(/Sec-Fetch-Site/);
        expect(policy.problem(method, h(undefined, { 'sec-fetch-site': 'same-site' }), loopback, plain)).toMatch(/Sec-Fetch-Site/);
        expect(policy.problem(method, h(undefined, { 'sec-fetch-site': 'same-origin' }), loopback, plain)).toBeUndefined();
      }
    }
  });

  it('a cross-origin read of an ordinary route passes (no CORS: the page cannot read it); the MCP transports refuse it', () => {
    for (const policy of [keyed, keyless]) {
      expect(policy.problem('GET', h('http://evil.example'), loopback, plain)).toBeUndefined();
      expect(policy.problem('GET', h('http://evil.example'), loopback, strict)).toMatch(/not allowed/);
      expect(policy.problem('GET', h('http://localhost:3000'), loopback, strict)).toMatch(/not allowed/);
      expect(policy.problem('GET', h('https://console.example.com'), loopback, strict)).toBeUndefined();
    }
  });

  it('keyless: approvals and admin routes refuse any Origin but its own, and cross-site or same-site fetch metadata, reads included', () => {
    expect(keyless.problem('GET', h('http://evil.example'), loopback, privileged)).toMatch(/no API key configured/);
    expect(keyless.problem('GET', h(undefined, { 'sec-fetch-site': 'cross-site' }), loopback, privileged)).toMatch(/no API key configured/);
    for (const method of ['GET', 'POST']) {
      expect(keyless.problem(method, h('http://evil.example'), loopback, privileged)).toMatch(/is not allowed|no API key configured/);
      expect(keyless.problem(method, h('https://console.example.com'), loopback, privileged)).toMatch(/no API key configured/);
      expect(keyless.problem(method, h(undefined, { 'sec-fetch-site': 'cross-site' }), loopback, privileged)).toMatch(/Sec-Fetch-Site/);
      expect(keyless.problem(method, h(undefined, { 'sec-fetch-site': 'same-site' }), loopback, privileged)).toMatch(/Sec-Fetch-Site/);
      expect(keyless.problem(method, h('http://127.0.0.1:8080', { 'sec-fetch-site': 'same-origin' }), loopback, privileged)).toBeUndefined();
      expect(keyless.problem(method, h(undefined, { 'sec-fetch-site': 'none' }), loopback, privileged)).toBeUndefined();
      expect(keyless.problem(method, h(), loopback, privileged)).toBeUndefined();
    }
    // With keys the listed origin may approve (the key is the proof), and a foreign read passes.
    expect(keyed.problem('POST', h('https://console.example.com'), loopback, privileged)).toBeUndefined();
    expect(keyed.problem('GET', h('http://evil.example'), loopback, privileged)).toBeUndefined();
  });

  it('the route is asked only when the verdict depends on it (the hot path reads no route options)', () => {
    let asked = 0;
    const count = () => {
      asked++;
      return { strict: true, privileged: true };
    };
    keyless.problem('POST', h(), loopback, count);
    keyless.problem('GET', h('http://127.0.0.1:8080'), loopback, count);
    keyless.problem('POST', h('http://evil.example'), loopback, count);
    expect(asked).toBe(0);
  });

  it('gives the same verdicts past the memo of Origin values, and again after the binding changes', () => {
    for (let i = 0; i < 600; i++) {
      expect(keyed.problem('POST', h(`http://127.0.0.1:${1000 + i}`), loopback, plain)).toMatch(/not allowed/);
      expect(keyed.problem('POST', h('http://127.0.0.1:8080'), loopback, plain)).toBeUndefined();
    }
    const moved = { host: '127.0.0.1', port: 9090 };
    expect(keyed.problem('POST', h('http://127.0.0.1:8080'), moved, plain)).toMatch(/not allowed/);
    expect(keyed.problem('POST', h('http://127.0.0.1:9090'), moved, plain)).toBeUndefined();
  });
});

describe('ownOrigins and configuredOrigin', () => {
  it('the own origin comes from the bound address: loopback aliases, IPv6 brackets, wildcards reach loopback', () => {
    expect([...ownOrigins({ host: '127.0.0.1', port: 8080 })].sort()).toEqual(['http://127.0.0.1:8080', 'http://localhost:8080']);
    expect([...ownOrigins({ host: '::1', port: 8080 })].sort()).toEqual(['http://[::1]:8080', 'http://localhost:8080']);
    expect([...ownOrigins({ host: '127.0.0.5', port: 80 })]).toEqual(['http://127.0.0.5']);
    expect([...ownOrigins({ host: '10.1.2.3', port: 8080 })]).toEqual(['http://10.1.2.3:8080']);
    expect([...ownOrigins({ host: '0.0.0.0', port: 8080 })].sort()).toEqual(['http://127.0.0.1:8080', 'http://localhost:8080']);
    expect([...ownOrigins({ host: '::', port: 8080 })].sort()).toEqual(['http://127.0.0.1:8080', 'http://[::1]:8080', 'http://localhost:8080']);
    expect(ownOrigins({ host: '127.0.0.1', port: undefined }).size).toBe(0);
  });

  it('configured origins are scheme://host[:port] and nothing else', () => {
    expect(configuredOrigin('https://Console.Example.com')).toBe('https://console.example.com');
    expect(configuredOrigin('http://localhost:5173/')).toBe('http://localhost:5173');
    expect(configuredOrigin('https://a.example:443')).toBe('https://a.example');
    for (const bad of ['null', '*', 'console.example.com', 'https://a.example/path', 'https://a.example/.', 'https://u:p@a.example', 'https://a.example?x', 'https://a.example#x', 'ftp://a.example', 'file:///tmp', '']) {
      expect(configuredOrigin(bad), bad).toBeUndefined();
    }
  });
});
