/** One dependency's readiness: `ready: false` keeps /readyz at 503 and names it in `missing`. */
export interface ReadinessCheck {
  readonly ready: boolean;
  /** Shown to operators, e.g. `loaded`, `loading`, `connecting`, `down`. */
  readonly state: string;
}

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, string>;
  missing: string[];
}

/**
 * The dependencies /readyz waits for. Each part of the gateway adds its own check: the registry
 * (first load done); later the MCP pool (prestart servers connected) and Redis (reported, never
 * blocking: SPEC §1 keeps a replica ready while Redis is down).
 */
export class Readiness {
  private readonly checks = new Map<string, () => ReadinessCheck>();

  add(name: string, check: () => ReadinessCheck): void {
    this.checks.set(name, check);
  }

  report(): ReadinessReport {
    const report: ReadinessReport = { ready: true, checks: {}, missing: [] };
    for (const [name, check] of this.checks) {
      const c = check();
      report.checks[name] = c.state;
      if (!c.ready) {
        report.ready = false;
        report.missing.push(name);
      }
    }
    return report;
  }
}
