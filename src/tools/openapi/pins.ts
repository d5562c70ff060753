import type { OperationDef } from './operations.js';

/** An operation definition that differs from the accepted one (audited as MCP tool changes are). */
export interface OperationChange {
  readonly tool: string;
  readonly oldHash: string;
  readonly newHash: string;
  readonly status: 'held' | 'accepted';
}

/** What to serve for one operation: the accepted definition, and the newer one held back, if any. */
export interface ServedOperation {
  readonly def: OperationDef;
  readonly held?: { readonly newHash: string };
}

interface Pin {
  accepted: OperationDef;
  pending?: OperationDef;
}

/**
 * One document's pinned operation definitions (by tool name), as src/mcp/pins.ts does for an MCP
 * server's tools: the first definition seen is trusted, a later different one is held until an
 * admin accepts it (or the file says `trustChanges: true`). Pins outlive an operation leaving the
 * document, so removing and re-adding it cannot slip a new definition in. In memory only.
 */
export class OperationPins {
  private readonly pins = new Map<string, Pin>();

  /**
   * Takes a document's operations; returns what to serve for each, and the changes seen now.
   * `fileOnly`: the document is unchanged and only the tools.d file was edited (the operator's own
   * change): a definition that differs is accepted, unless a change of the document is already
   * held for it (that one stays held, now in its edited form: an edit must not release it).
   */
  observe(defs: readonly OperationDef[], trust: boolean, fileOnly = false): { served: ServedOperation[]; changes: OperationChange[] } {
    const served: ServedOperation[] = [];
    const changes: OperationChange[] = [];
    for (const def of defs) {
      const pin = this.pins.get(def.name);
      if (!pin) {
        this.pins.set(def.name, { accepted: def });
        served.push({ def });
        continue;
      }
      if (def.hash === pin.accepted.hash) {
        pin.accepted = def; // same definition (the file around it may have changed: overrides, baseUrl)
        delete pin.pending;
        served.push({ def });
        continue;
      }
      const known = pin.pending?.hash === def.hash;
      const oldHash = pin.accepted.hash;
      if (fileOnly && !trust) {
        if (pin.pending) {
          pin.pending = def;
          served.push({ def: pin.accepted, held: { newHash: def.hash } });
        } else {
          pin.accepted = def;
          served.push({ def });
        }
        continue;
      }
      if (trust) {
        pin.accepted = def;
        delete pin.pending;
        served.push({ def });
        changes.push({ tool: def.name, oldHash, newHash: def.hash, status: 'accepted' });
        continue;
      }
      pin.pending = def;
      served.push({ def: pin.accepted, held: { newHash: def.hash } });
      if (!known) changes.push({ tool: def.name, oldHash, newHash: def.hash, status: 'held' });
    }
    return { served, changes };
  }

  /** Makes the held definition the accepted one; undefined when nothing is held for `tool`. */
  accept(tool: string): OperationChange | undefined {
    const pin = this.pins.get(tool);
    if (!pin?.pending) return undefined;
    const change: OperationChange = { tool, oldHash: pin.accepted.hash, newHash: pin.pending.hash, status: 'accepted' };
    pin.accepted = pin.pending;
    delete pin.pending;
    return change;
  }

  heldCount(): number {
    return [...this.pins.values()].filter((p) => p.pending).length;
  }
}
