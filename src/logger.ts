import { pino, type Logger } from 'pino';
import { scrubSecrets } from './audit/redact.js';

/**
 * The process logger: JSON lines, with Authorization headers removed by path and every
 * secret value (anything that came from `${env:...}`) masked wherever it appears.
 */
export function createLogger(level: string, secrets: ReadonlySet<string>, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    redact: { paths: ['req.headers.authorization', 'headers.authorization', '*.headers.authorization', 'authorization'], censor: '[REDACTED]' },
    hooks: {
      logMethod(args, method) {
        method.apply(this, scrubSecrets(args, secrets) as Parameters<typeof method>);
      },
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
