import { describe, expect, it } from 'vitest';
import { expandEnv } from '../../src/util/env.js';

describe('${env:NAME:-default}', () => {
  const expand = (text: string, env: Record<string, string | undefined>) => {
    const secrets = new Set<string>();
    const unset = new Set<string>();
    return { value: expandEnv(text, env, secrets, unset), secrets: [...secrets], unset: [...unset] };
  };

  it('takes the variable when set (a secret, as every substituted value), the default when unset or empty', () => {
    expect(expand('http://127.0.0.1:${env:PORT:-8080}/readyz', { PORT: '9000123' })).toEqual({ value: 'http://127.0.0.1:9000123/readyz', secrets: ['9000123'], unset: [] });
    // The variable does not count as unset; the default is masked like any substituted value (a default key must not leak).
    expect(expand('http://127.0.0.1:${env:PORT:-8080}/readyz', {})).toEqual({ value: 'http://127.0.0.1:8080/readyz', secrets: ['8080'], unset: [] });
    expect(expand('${env:KEY:-dev-key-123456}', { KEY: '' })).toEqual({ value: 'dev-key-123456', secrets: ['dev-key-123456'], unset: [] });
  });

  it('an empty default is allowed; plain ${env:NAME} is unchanged (empty, recorded as unset); a default ends at the first }', () => {
    expect(expand('a${env:X:-}b', {}).value).toBe('ab');
    expect(expand('${env:X}', {})).toEqual({ value: '', secrets: [], unset: ['X'] });
    expect(expand('a${env:X:-}b', {}).unset).toEqual([]);
    expect(expand('${env:X:-{y}}', {}).value).toBe('{y}');
    expect(expand('${env:X-8080}', { X: 'v' }).value).toBe('${env:X-8080}'); // only ':-' is the default syntax
  });
});

describe('toolgate check on a default in a secret field', () => {
  it('counts a non-empty default as a secret written in the file', async () => {
    const { isLiteralSecret } = await import('../../src/cli/secrets.js');
    expect(isLiteralSecret('Bearer ${env:TOKEN:-sk-inline-123}')).toBe(true);
    expect(isLiteralSecret('Bearer ${env:TOKEN}')).toBe(false);
    expect(isLiteralSecret('${env:TOKEN:-}')).toBe(false);
  });
});
