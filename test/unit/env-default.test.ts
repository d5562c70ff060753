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
    // The default is written in the file: not a secret, and the variable does not count as unset.
    expect(expand('http://127.0.0.1:${env:PORT:-8080}/readyz', {})).toEqual({ value: 'http://127.0.0.1:8080/readyz', secrets: [], unset: [] });
    expect(expand('${env:PORT:-8080}', { PORT: '' })).toEqual({ value: '8080', secrets: [], unset: [] });
  });

  it('an empty default is allowed; plain ${env:NAME} is unchanged (empty, recorded as unset); a default ends at the first }', () => {
    expect(expand('a${env:X:-}b', {}).value).toBe('ab');
    expect(expand('${env:X}', {})).toEqual({ value: '', secrets: [], unset: ['X'] });
    expect(expand('${env:X:-{y}}', {}).value).toBe('{y}');
    expect(expand('${env:X-8080}', { X: 'v' }).value).toBe('${env:X-8080}'); // only ':-' is the default syntax
  });
});
