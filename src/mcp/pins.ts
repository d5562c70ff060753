import type { Tool } from '@modelcontextprotocol/client';
import { digest } from '../util/hash.js';

/** A tool a server lists, as the import should use it: the accepted definition, and whether a newer one is held back. */
export interface ListedTool {
  readonly def: Tool;
  /** Pin of `def`. */
  readonly hash: string;
  readonly held?: { readonly newHash: string };
}

/** A definition that differs from the accepted one. */
export interface PinChange {
  /** The tool's name on its server. */
  readonly tool: string;
  readonly oldHash: string;
  readonly newHash: string;
  /** `held` until an admin accepts; `accepted` at once for a server with `trustChanges`. */
  readonly status: 'held' | 'accepted';
}

interface Pinned {
  readonly hash: string;
  readonly def: Tool;
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

/**
 * One server's pinned tool definitions. The first definition seen of a name is trusted; a later
 * different one is held (the accepted one stays in use) until accepted. Pins outlive a tool
 * leaving the list, so removing and re-adding a tool cannot slip a new definition in. They live
 * as long as the server's file declares it (in memory: a gateway restart trusts anew).
 */
export class PinBook {
  private readonly pins = new Map<string, { accepted: Pinned; pending?: Pinned }>();

  /** Takes a fresh `tools/list`; returns the definitions that differ from the accepted ones. */
  observe(tools: readonly Tool[], trust: boolean): PinChange[] {
    const changes: PinChange[] = [];
    for (const def of tools) {
      const hash = toolHash(def);
      const pin = this.pins.get(def.name);
      if (!pin) {
        this.pins.set(def.name, { accepted: { hash, def } });
        continue;
      }
      if (hash === pin.accepted.hash) {
        delete pin.pending; // changed back: nothing to review any more
        continue;
      }
      if (pin.pending?.hash === hash) continue;
      const oldHash = pin.accepted.hash;
      if (trust) {
        pin.accepted = { hash, def };
        delete pin.pending;
      } else {
        pin.pending = { hash, def };
      }
      changes.push({ tool: def.name, oldHash, newHash: hash, status: trust ? 'accepted' : 'held' });
    }
    return changes;
  }

  /** The tools of the current list, each with the definition to serve. */
  listed(tools: readonly Tool[]): ListedTool[] {
    return tools.flatMap((t) => {
      const pin = this.pins.get(t.name);
      if (!pin) return [];
      const { hash, def } = pin.accepted;
      return [pin.pending ? { def, hash, held: { newHash: pin.pending.hash } } : { def, hash }];
    });
  }

  /** Makes the held definition the accepted one; undefined when nothing is held for `tool`. */
  accept(tool: string): PinChange | undefined {
    const pin = this.pins.get(tool);
    if (!pin?.pending) return undefined;
    const change: PinChange = { tool, oldHash: pin.accepted.hash, newHash: pin.pending.hash, status: 'accepted' };
    pin.accepted = pin.pending;
    delete pin.pending;
    return change;
  }

  /** Accepts every held definition (the server's file now says `trustChanges: true`). */
  acceptAll(): PinChange[] {
    return [...this.pins.keys()].flatMap((tool) => this.accept(tool) ?? []);
  }
}
