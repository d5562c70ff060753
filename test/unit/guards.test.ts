import { describe, expect, it } from 'vitest';
import { mkdtempSync, mkdirSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathProblem } from '../../src/guards/path.js';
import { isPrivateHost, urlProblem } from '../../src/guards/url.js';

/** The guards' first cases; test/unit/path-guard.test.ts and url-guard.test.ts hold the hostile lists. */
const pathAllowed = async (p: string, prefixes: string[]) => (await pathProblem(p, prefixes)) === undefined;

describe('path guard', () => {
  const allow = ['/srv/shared'];
  it.each(['/srv/shared', '/srv/shared/a.txt', '/srv/shared/dir/../b.txt', 'srv/shared/c', '/srv/shared/./d'])('allows %s', async (p) => {
    expect(await pathAllowed(p, allow)).toBe(true);
  });
  it.each([
    '/srv/shared/../../etc/passwd',
    '../etc/passwd',
    '/srv/shared/%2e%2e/%2e%2e/etc/passwd',
    '/srv/shared/..%2f..%2fetc/passwd',
    '/srv/shared/%252e%252e/secret',
    '/srv/shared\\..\\..\\etc\\passwd',
    '/srv/shared-evil/x',
    '/srv/shared/\u0000/x',
    '/etc/passwd',
  ])('refuses %s', async (p) => {
    expect(await pathAllowed(p, allow)).toBe(false);
  });
  it('follows a local symlink that leads out of the prefix', async () => {
    const root = mkdtempSync(join(tmpdir(), 'toolgate-guard-'));
    mkdirSync(join(root, 'shared'));
    mkdirSync(join(root, 'private'));
    symlinkSync(join(root, 'private'), join(root, 'shared', 'link'));
    expect(await pathAllowed(join(root, 'shared', 'ok.txt'), [join(root, 'shared')])).toBe(true);
    expect(await pathAllowed(join(root, 'shared', 'link'), [join(root, 'shared')])).toBe(false);
  });
});

describe('URL guard', () => {
  it.each([
    'http://169.254.169.254/latest/meta-data/',
    'http://[::ffff:169.254.169.254]/',
    'http://127.0.0.1:8080/admin',
    'http://localhost/',
    'http://10.0.0.5/',
    'http://[::1]/',
    'http://metadata.google.internal/computeMetadata/v1/',
    'http://192.168.1.1/',
  ])('refuses the internal address %s', (url) => {
    expect(urlProblem(url, undefined, false)).toMatch(/private|loopback|metadata/);
  });
  it.each(['http://2852039166/', 'http://0xA9FEA9FE/'])('refuses the metadata address written as one number, %s', (url) => {
    expect(urlProblem(url, undefined, false)).toContain('169.254.169.254');
  });
  it('allows public hosts, and applies an allow-list', () => {
    expect(urlProblem('https://api.example.com/v1', undefined, false)).toBeUndefined();
    expect(urlProblem('https://api.example.com/v1', ['*.example.com'], false)).toBeUndefined();
    expect(urlProblem('https://evil.test/', ['*.example.com'], false)).toContain('allow-list');
    expect(urlProblem('file:///etc/passwd', undefined, false)).toContain('scheme');
    expect(urlProblem('http://user:pw@example.com/', undefined, false)).toContain('credentials');
    expect(urlProblem('http://127.0.0.1/', undefined, true)).toBeUndefined();
  });
  it('knows IPv6 private ranges', () => {
    expect(isPrivateHost('fd00::1')).toBe(true);
    expect(isPrivateHost('fe80::1')).toBe(true);
    expect(isPrivateHost('2001:db8::1')).toBe(true); // documentation range: not routable
    expect(isPrivateHost('2606:4700:4700::1111')).toBe(false);
  });
});
