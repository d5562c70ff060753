import { canSee, type Caller } from '../auth/caller.js';
import type { Naming } from '../batch/content.js';
import type { Registry } from '../tools/registry.js';
import type { CompiledTool } from '../tools/types.js';

/**
 * The names /mcp and /sse show tools by (mcp.toolNames): `provider`, the names of
 * `?format=openai` (CompiledTool.providerName, made unique when the tools load), or the
 * canonical dotted ones. Calls accept both forms (Registry.get); audit and metrics keep the
 * canonical name (the pipeline records the tool it resolved).
 */
export interface McpNames {
  naming: Naming;
  /** A tool's name as listed. */
  of(t: CompiledTool): string;
  /** The name a canonical one is shown as (unknown names unchanged). */
  shown(canonical: string): string;
  /** A text the gateway wrote for the model, its quoted canonical tool names shown as listed. */
  text(text: string): string;
  /** A confirmation's summary (confirm/gate.ts: "<caller> asks to run <tool> (…"), the tool shown as listed. */
  summary(summary: string, canonical: string): string;
}

/** Quoted tool names in gateway texts: `'weather.current'`. */
const QUOTED = /'([a-z0-9_-]+(?:\.[a-z0-9_-]+)*)'/g;

export function mcpNames(naming: Naming, registry: () => Registry): McpNames {
  if (naming === 'canonical') return { naming, of: (t) => t.name, shown: (n) => n, text: (s) => s, summary: (s) => s };
  const shown = (n: string) => {
    const t = registry().get(n);
    return t?.name === n ? t.providerName : n;
  };
  return {
    naming,
    of: (t) => t.providerName,
    shown,
    text: (s) => s.replace(QUOTED, (_m, n: string) => `'${shown(n)}'`),
    summary: (s, canonical) => s.replace(` asks to run ${canonical} (`, ` asks to run ${shown(canonical)} (`),
  };
}

/** The tool a call names when the caller may not see it: such a call answers as an unknown name would. */
export function hiddenFrom(registry: Registry, caller: Caller, name: string): boolean {
  const t = registry.get(name);
  return t !== undefined && !canSee(caller, t);
}
