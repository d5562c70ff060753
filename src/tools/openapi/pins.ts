import type { DefinitionFinding } from '../definition-findings.js';
import type { OperationDef } from './operations.js';

/** Why an operation is held: its definition changed, or a definition (new or changed) has findings (tool poisoning). */
export type OperationHoldReason = 'changed' | 'poisoned';

/** An operation definition that differs from the accepted one, or a first one with findings (audited as MCP tool changes are). */
export interface OperationChange {
  readonly tool: string;
  /** null: nothing was accepted before (a first definition held for its findings, or the first clean one after it). */
  readonly oldHash: string | null;
  readonly newHash: string;
  readonly status: 'held' | 'accepted';
  readonly reason: OperationHoldReason;
  readonly findings: readonly DefinitionFinding[];
}

/** A held definition, as the tool is marked. */
export interface OperationHold {
  readonly newHash: string;
  readonly reason: OperationHoldReason;
  /** Pin of the accepted definition; null when none was ever accepted (poisoned from the start: listed nowhere). */
  readonly oldHash: string | null;
  readonly findings: readonly DefinitionFinding[];
  /** The held definition as a model would be shown it (the document's own text, for the admin to review). */
  readonly definition: { readonly name: string; readonly description: string; readonly inputSchema: unknown; readonly outputSchema?: unknown };
}

/** What to serve for one operation: the accepted definition (or, with none accepted, the held one), and the one held back, if any. */
export interface ServedOperation {
  readonly def: OperationDef;
  readonly held?: OperationHold;
}

interface Pin {
  accepted?: OperationDef;
  pending?: OperationDef;
}

const sameFindings = (a: readonly DefinitionFinding[], b: readonly DefinitionFinding[]) => JSON.stringify(a) === JSON.stringify(b);

/**
 * One document's pinned operation definitions (by tool name), as src/mcp/pins.ts does for an MCP
 * server's tools: the first definition seen is trusted unless the definition checks find something
 * in it; a later different one is held until an admin accepts it (or the file says
 * `trustChanges: true`). A definition with findings is held whatever `trustChanges` says. Pins
 * outlive an operation leaving the document, so removing and re-adding it cannot slip a new
 * definition in. In memory only.
 */
export class OperationPins {
  private readonly pins = new Map<string, Pin>();

  /**
   * Takes a document's operations; returns what to serve for each, and the changes seen now.
   * `fileOnly`: the document is unchanged and only the tools.d file was edited (the operator's own
   * change): a definition that differs is accepted (unless it brings findings the accepted one did
   * not have), unless a change of the document is already held for it (that one stays held, now in
   * its edited form: an edit must not release it).
   */
  observe(defs: readonly OperationDef[], trust: boolean, fileOnly = false, reviewed: Readonly<Record<string, string>> = {}): { served: ServedOperation[]; changes: OperationChange[] } {
    const served: ServedOperation[] = [];
    const changes: OperationChange[] = [];
    const hold = (pin: Pin, def: OperationDef, known: boolean) => {
      const oldHash = pin.accepted?.hash ?? null;
      const reason: OperationHoldReason = def.findings.length > 0 ? 'poisoned' : 'changed';
      pin.pending = def;
      const { name, description, inputSchema, outputSchema } = def.file;
      const definition = { name, description, inputSchema, ...(outputSchema !== undefined ? { outputSchema } : {}) };
      served.push({ def: pin.accepted ?? def, held: { newHash: def.hash, reason, oldHash, findings: def.findings, definition } });
      if (!known) changes.push({ tool: def.name, oldHash, newHash: def.hash, status: 'held', reason, findings: def.findings });
    };
    for (const def of defs) {
      let pin = this.pins.get(def.name);
      const poisoned = def.findings.length > 0;
      // `acceptDefinitions` names this exact definition: an admin reviewed it, it is not held for its findings.
      const passed = poisoned && [def.name, def.name.slice(def.spec.length + 1), def.operationId].some((k) => k !== undefined && reviewed[k] === def.hash);
      if (passed && pin?.accepted?.hash !== def.hash) {
        const oldHash = pin?.accepted?.hash ?? null;
        this.pins.set(def.name, { accepted: def });
        served.push({ def });
        changes.push({ tool: def.name, oldHash, newHash: def.hash, status: 'accepted', reason: 'poisoned', findings: def.findings });
        continue;
      }
      if (!pin) {
        pin = {};
        this.pins.set(def.name, pin);
        if (def.findings.length > 0) hold(pin, def, false);
        else {
          pin.accepted = def;
          served.push({ def });
        }
        continue;
      }
      if (def.hash === pin.accepted?.hash) {
        pin.accepted = def; // same definition (the file around it may have changed: overrides, baseUrl)
        delete pin.pending;
        served.push({ def });
        continue;
      }
      const known = pin.pending?.hash === def.hash;
      const oldHash = pin.accepted?.hash ?? null;
      if (!poisoned && oldHash === null) {
        // A clean definition replacing one never accepted (held for its findings): nothing to review.
        pin.accepted = def;
        delete pin.pending;
        served.push({ def });
        changes.push({ tool: def.name, oldHash, newHash: def.hash, status: 'accepted', reason: 'changed', findings: [] });
        continue;
      }
      if (fileOnly) {
        // The operator's own edit: a held change stays held (in its edited form, not audited again); otherwise
        // accepted, unless it brings findings the accepted definition did not have.
        if (pin.pending && (poisoned || !trust)) {
          hold(pin, def, true);
          continue;
        }
        if (!pin.pending && (poisoned ? sameFindings(pin.accepted?.findings ?? [], def.findings) : !trust)) {
          pin.accepted = def;
          served.push({ def });
          continue;
        }
      }
      if (trust && !poisoned) {
        pin.accepted = def;
        delete pin.pending;
        served.push({ def });
        changes.push({ tool: def.name, oldHash, newHash: def.hash, status: 'accepted', reason: 'changed', findings: [] });
        continue;
      }
      hold(pin, def, known);
    }
    return { served, changes };
  }

  /** Makes the held definition the accepted one (that exact definition); undefined when nothing is held for `tool`. */
  accept(tool: string): OperationChange | undefined {
    const pin = this.pins.get(tool);
    const p = pin?.pending;
    if (!pin || !p) return undefined;
    const change: OperationChange = { tool, oldHash: pin.accepted?.hash ?? null, newHash: p.hash, status: 'accepted', reason: p.findings.length > 0 ? 'poisoned' : 'changed', findings: p.findings };
    pin.accepted = p;
    delete pin.pending;
    return change;
  }

  heldCount(): number {
    return [...this.pins.values()].filter((p) => p.pending).length;
  }
}
