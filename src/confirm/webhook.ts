import type { Confirmation } from './service.js';
import { identityFields } from '../audit/identity.js';

/**
 * POSTs each new pending confirmation to the configured URL, without the arguments' secrets
 * (redacted arguments only) and without blocking the call; failures are reported, not thrown.
 */
export function webhookNotifier(
  hook: { url: string; headers?: Record<string, string> },
  onError: (e: unknown) => void,
): (conf: Confirmation) => void {
  return (conf) => {
    const body = {
      event: 'confirmation.pending',
      id: conf.id,
      callId: conf.callId,
      tool: conf.tool,
      caller: conf.caller,
      ...identityFields(conf.asker?.identity),
      sessionId: conf.sessionId ?? null,
      summary: conf.summary,
      arguments: conf.argsRedacted,
      createdAt: conf.createdAt,
      expiresAt: conf.expiresAt,
      decide: { approve: `/v1/confirmations/${conf.id}/approve`, reject: `/v1/confirmations/${conf.id}/reject` },
    };
    fetch(hook.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...hook.headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(5000),
    })
      .then((res) => {
        if (!res.ok) onError(new Error(`webhook answered ${res.status}`));
        return res.body?.cancel();
      })
      .catch(onError);
  };
}
