import type { TSchema } from '@sinclair/typebox';
import type { ValidateFunction } from 'ajv';
import { GatewayError } from '../errors.js';
import { createAjv, describeAjvError } from '../util/ajv.js';

const ajv = createAjv();

/** A dialect schema compiled once; `check` throws BAD_REQUEST naming each problem by JSON pointer. */
export function compileCheck<T>(schema: TSchema, what: string): (value: unknown, at?: string) => T {
  const validate = ajv.compile(schema) as ValidateFunction<T>;
  return (value, at = '') => {
    if (validate(value)) return value;
    const details = (validate.errors ?? [])
      .filter((e) => e.keyword !== 'anyOf')
      .slice(0, 10)
      .map((e) => {
        const d = describeAjvError(e);
        return { path: `${at}${d.path}` || '/', message: d.message };
      });
    const list = details.map((d) => `${d.path} ${d.message}`).join('; ');
    throw new GatewayError('BAD_REQUEST', `not a valid ${what} batch: ${list}`, {
      details,
      modelMessage: `The batch was read as ${what} tool calls but is malformed (${list}). Fix it and send it again.`,
    });
  };
}
