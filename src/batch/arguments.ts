import { GatewayError } from '../errors.js';

/**
 * Reads a provider's `arguments`: a JSON string as the model wrote it (an empty string meaning no
 * arguments), or an object. A string that is not JSON fails that one call with INVALID_ARGUMENTS:
 * the model can repair it, and the other calls of the batch still run.
 */
export function readArguments(raw: unknown, name: string): { args: unknown; invalid?: GatewayError } {
  if (raw === undefined) return { args: {} };
  if (typeof raw !== 'string') return { args: raw };
  if (raw.trim() === '') return { args: {} };
  try {
    return { args: JSON.parse(raw) as unknown };
  } catch (e) {
    const why = e instanceof Error ? e.message : 'not JSON';
    return {
      args: undefined,
      invalid: new GatewayError('INVALID_ARGUMENTS', `the arguments of '${name}' are not valid JSON: ${why}`, {
        details: [{ path: '/', message: `not valid JSON: ${why}` }],
        modelMessage: `The arguments for '${name}' were not valid JSON (${why}). Call it again with the arguments as one JSON object that matches its input schema.`,
      }),
    };
  }
}
