import { describe, expect, it } from 'vitest';
import { originProblem } from '../../src/mcp-server/origin.js';

const loopback = { host: '127.0.0.1', port: 8080 };
const none = new Set<string>();

describe('originProblem (DNS-rebinding protection)', () => {
  it('bound to loopback: a loopback Host passes, any other is refused, however often and in whatever order each is seen', () => {
    for (let i = 0; i < 3; i++) {
      expect(originProblem({ host: '127.0.0.1:8080' }, loopback, none)).toBeUndefined();
      expect(originProblem({ host: 'evil.example:8080' }, loopback, none)).toMatch(/not a loopback name/);
      expect(originProblem({ host: 'localhost:8080' }, loopback, none)).toBeUndefined();
      expect(originProblem({ host: '[::1]:8080' }, loopback, none)).toBeUndefined();
      expect(originProblem({}, loopback, none)).toMatch(/not a loopback name/);
    }
  });

  it('gives the same verdicts past the memo of Host values (many distinct names)', () => {
    for (let i = 0; i < 600; i++) {
      expect(originProblem({ host: `127.0.0.${i % 250}:8080` }, loopback, none)).toBeUndefined();
      expect(originProblem({ host: `evil${i}.example` }, loopback, none)).toMatch(/not a loopback name/);
    }
  });

  it('a binding that changes is read again: on a public address any Host is fine, a foreign Origin is not', () => {
    expect(originProblem({ host: 'evil.example' }, loopback, none)).toMatch(/not a loopback name/);
    const pub = { host: '0.0.0.0', port: 8080 };
    expect(originProblem({ host: 'gateway.example' }, pub, none)).toBeUndefined();
    expect(originProblem({ host: 'gateway.example', origin: 'http://evil.example' }, pub, none)).toMatch(/not allowed/);
    expect(originProblem({ host: 'gateway.example', origin: 'https://console.example.com' }, pub, new Set(['https://console.example.com']))).toBeUndefined();
    expect(originProblem({ host: 'evil.example' }, loopback, none)).toMatch(/not a loopback name/);
  });
});
