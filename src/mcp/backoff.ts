/** Reconnect timing of a supervised MCP session. */
export interface BackoffSettings {
  /** Upper bound of the first retry's delay. */
  initialMs: number;
  maxMs: number;
  factor: number;
  /** A session that stayed up this long was healthy: the next failure starts over at initialMs. */
  healthyAfterMs: number;
}

export const DEFAULT_BACKOFF: BackoffSettings = { initialMs: 250, maxMs: 30000, factor: 2, healthyAfterMs: 10000 };

/**
 * Delay before retry number `attempt` (0-based): exponential with "equal jitter", so it lies in
 * [base/2, base] with base = min(maxMs, initialMs · factor^attempt). Jitter keeps many gateways
 * from reconnecting to a shared server in lockstep.
 */
export function backoffDelay(attempt: number, settings: BackoffSettings, random: () => number = Math.random): number {
  const base = Math.min(settings.maxMs, settings.initialMs * settings.factor ** Math.max(0, attempt));
  return Math.round(base / 2 + (random() * base) / 2);
}
