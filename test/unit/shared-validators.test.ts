import { describe, expect, it } from 'vitest';
import { createAjv } from '../../src/util/ajv.js';
import { compileValidator } from '../../src/tools/lazy-validator.js';

const schema = () => ({ type: 'object', required: ['message'], properties: { message: { type: 'string', maxLength: 5 } } });

describe('validators shared between identical schemas', () => {
  it('two tools with the same schema judge their own calls, each with its own errors', () => {
    const ajv = createAjv();
    const a = compileValidator(ajv, schema());
    const b = compileValidator(ajv, schema());
    expect(a({ message: 'far too long' })).toBe(false);
    expect(b({ message: 'ok' })).toBe(true);
    expect(b.errors ?? null).toBeNull();
    expect(a.errors?.[0]?.instancePath).toBe('/message');
    expect(b({})).toBe(false);
    expect(b.errors?.[0]?.params).toEqual({ missingProperty: 'message' });
    expect(a.schemaEnv).toBe(b.schemaEnv); // one compiled function behind both
  });

  it('a schema that differs in one keyword gets its own validator', () => {
    const ajv = createAjv();
    const a = compileValidator(ajv, schema());
    const b = compileValidator(ajv, { ...schema(), properties: { message: { type: 'string', maxLength: 50 } } });
    expect(a({ message: 'far too long' })).toBe(false);
    expect(b({ message: 'far too long' })).toBe(true);
    expect(a.schemaEnv).not.toBe(b.schemaEnv);
  });
});
