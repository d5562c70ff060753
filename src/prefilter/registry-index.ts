import type { Registry } from '../tools/registry.js';
import type { CompiledTool } from '../tools/types.js';
import { PrefilterIndex, type PrefilterTool } from './index.js';

/** What the prefilter reads of a compiled tool: names, prose, examples, parameter names and descriptions. */
export function prefilterTool(t: CompiledTool): PrefilterTool {
  const props = t.inputSchema['properties'];
  const params =
    props !== null && typeof props === 'object'
      ? Object.entries(props as Record<string, unknown>).map(([name, p]) => {
          const d = p !== null && typeof p === 'object' ? (p as Record<string, unknown>)['description'] : undefined;
          return typeof d === 'string' ? { name, description: d } : { name };
        })
      : [];
  return {
    name: t.name,
    providerName: t.providerName,
    aliases: t.aliases,
    ...(t.title !== undefined ? { title: t.title } : {}),
    description: t.description,
    tags: t.tags,
    examples: t.examples,
    params,
  };
}

const built = new WeakMap<Registry, PrefilterIndex>();
let everBuilt = false;

/** The index of a registry generation, built once on first use and dropped with the generation. */
export function indexFor(registry: Registry): PrefilterIndex {
  let index = built.get(registry);
  if (!index) {
    index = PrefilterIndex.build(registry.tools.map(prefilterTool));
    built.set(registry, index);
    everBuilt = true;
  }
  return index;
}

/** Whether this process has built an index yet (and so loaded the lexicons): a gateway that ranks. */
export function anyIndexBuilt(): boolean {
  return everBuilt;
}
