import type { Tool } from '@modelcontextprotocol/client';
import { definitionFindings, type DefinitionFinding } from '../tools/definition-findings.js';
import { digest } from '../util/hash.js';

/** Why a tool is held: its definition changed, or a definition (new or changed) has findings (tool poisoning). */
export type HoldReason = 'changed' | 'poisoned';

/** A held definition, as the import marks the tool. */
export interface Hold {
  readonly newHash: string;
  readonly reason: HoldReason;
  /** Pin of the accepted definition; null when none was ever accepted (poisoned from the start). */
  readonly oldHash: string | null;
  readonly findings: readonly DefinitionFinding[];
  /** The held definition itself, as the server listed it (the admin reviews it). */
  readonly definition: Tool;
}

/** A tool a server lists, as the import should use it: the definition to serve, and the one held back, if any. */
export interface ListedTool {
  /** The accepted definition; for a tool poisoned from the start (nothing accepted), the held one, never listed. */
  readonly def: Tool;
  /** Pin of `def`. */
  readonly hash: string;
  readonly held?: Hold;
}

/** A definition that differs from the accepted one, or the first definition of a tool, when it has findings. */
export interface PinChange {
  /** The tool's name on its server. */
  readonly tool: string;
  /** null: nothing was accepted before (a new tool held for its findings, or the first clean one after it). */
  readonly oldHash: string | null;
  readonly newHash: string;
  /** `held` until an admin accepts; `accepted` at once for a server with `trustChanges` (findings are still held). */
  readonly status: 'held' | 'accepted';
  readonly reason: HoldReason;
  readonly findings: readonly DefinitionFinding[];
}

interface Pinned {
  readonly hash: string;
  readonly def: Tool;
}
interface Pending extends Pinned {
  readonly findings: readonly DefinitionFinding[];
}

/**
 * The pin of a definition: everything a model or the gate acts on (the brief asks for name,
 * description and input schema; title, output schema and annotations are included because a
 * flipped `readOnlyHint` would silently ungate a tool).
 */
export function toolHash(def: Tool): string {
  const { name, title, description, inputSchema, outputSchema, annotations } = def;
  return digest({ name, title, description, inputSchema, outputSchema, annotations });
}

export type ToolScanner = (def: Tool) => readonly DefinitionFinding[];

/**
 * One server's pinned tool definitions. The first definition seen of a name is trusted unless the
 * definition checks find something in it; a later different one is held (the accepted one stays in
 * use) until accepted. A definition with findings is held whatever `trustChanges` says: trusting a
 * server's changes is about review fatigue, not about letting instructions to the model through.
 * Pins outlive a tool leaving the list, so removing and re-adding a tool cannot slip a new
 * definition in. They live as long as the server's file declares it (in memory: a gateway restart
 * trusts, and scans, anew).
 */
export class PinBook {
  private readonly pins = new Map<string, { accepted?: Pinned; pending?: Pending }>();

  constructor(private readonly scan: ToolScanner = definitionFindings) {}

  /**
   * Takes a fresh `tools/list`; returns the definitions held or accepted by it. `reviewed` maps a
   * tool's name to the hash of a definition an admin reviewed in the server's file
   * (`acceptDefinitions`): that exact definition is not held for its findings.
   */
  observe(tools: readonly Tool[], trust: boolean, reviewed: Readonly<Record<string, string>> = {}): PinChange[] {
    const changes: PinChange[] = [];
    for (const def of tools) {
      const hash = toolHash(def);
      let pin = this.pins.get(def.name);
      if (pin?.accepted?.hash === hash) {
        delete pin.pending; // changed back: nothing to review any more
        continue;
      }
      if (pin?.pending?.hash === hash) continue;
      const findings = this.scan(def);
      const oldHash = pin?.accepted?.hash ?? null;
      const passed = findings.length > 0 && reviewed[def.name] === hash;
      if (!pin) {
        pin = {};
        this.pins.set(def.name, pin);
      }
      const reason: 'changed' | 'poisoned' = findings.length > 0 ? 'poisoned' : 'changed';
      if (passed || (findings.length === 0 && (trust || oldHash === null))) {
        // A clean first definition (or a clean one replacing a never-accepted poisoned one), or a trusted change.
        const wasPending = pin.pending !== undefined;
        pin.accepted = { hash, def };
        delete pin.pending;
        if (oldHash !== null || wasPending || passed) changes.push({ tool: def.name, oldHash, newHash: hash, status: 'accepted', reason, findings });
        continue;
      }
      pin.pending = { hash, def, findings };
      changes.push({ tool: def.name, oldHash, newHash: hash, status: 'held', reason, findings });
    }
    return changes;
  }

  /** The tools of the current list, each with the definition to serve. */
  listed(tools: readonly Tool[]): ListedTool[] {
    return tools.flatMap((t) => {
      const pin = this.pins.get(t.name);
      const served = pin?.accepted ?? pin?.pending;
      if (!pin || !served) return [];
      const p = pin.pending;
      if (!p) return [{ def: served.def, hash: served.hash }];
      const held: Hold = {
        newHash: p.hash,
        reason: p.findings.length > 0 ? 'poisoned' : 'changed',
        oldHash: pin.accepted?.hash ?? null,
        findings: p.findings,
        definition: p.def,
      };
      return [{ def: served.def, hash: served.hash, held }];
    });
  }

  /** Makes the held definition the accepted one (that exact definition); undefined when nothing is held for `tool`. */
  accept(tool: string): PinChange | undefined {
    const pin = this.pins.get(tool);
    const p = pin?.pending;
    if (!pin || !p) return undefined;
    const change: PinChange = {
      tool, oldHash: pin.accepted?.hash ?? null, newHash: p.hash, status: 'accepted', reason: p.findings.length > 0 ? 'poisoned' : 'changed', findings: p.findings,
    };
    pin.accepted = { hash: p.hash, def: p.def };
    delete pin.pending;
    return change;
  }

  /**
   * The server's file changed: with `trustChanges` every held change without findings is accepted;
   * a held definition whose hash `acceptDefinitions` now names is accepted too. Others stay held.
   */
  acceptAll(trust: boolean, reviewed: Readonly<Record<string, string>> = {}): PinChange[] {
    return [...this.pins.entries()].flatMap(([tool, pin]) => {
      const p = pin.pending;
      const ok = p !== undefined && ((trust && p.findings.length === 0) || reviewed[tool] === p.hash);
      return ok ? (this.accept(tool) ?? []) : [];
    });
  }
}
