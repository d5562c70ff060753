import type { FileProblem } from '../util/source.js';
import type { McpServerEntry } from './mcp-file.js';
import type { CompiledTool } from './types.js';
import type { OpenApiSummary } from './openapi/summary.js';

/**
 * An immutable snapshot of the tools a generation serves. A reload builds a new one and swaps
 * it in whole: a call keeps the snapshot (and so the definition) it started with.
 */
export class Registry {
  private readonly byName: ReadonlyMap<string, CompiledTool>;
  private readonly byProviderName: ReadonlyMap<string, CompiledTool>;
  readonly tools: readonly CompiledTool[];

  constructor(
    readonly generation: number,
    readonly loadedAt: string,
    tools: readonly CompiledTool[],
    readonly problems: readonly FileProblem[],
    /** MCP servers declared by the files of this generation (their tools are among `tools` once imported). */
    readonly servers: readonly McpServerEntry[] = [],
    /** Things a file said that were ignored (an MCP client's foreign keys): logged, never refused. */
    readonly warnings: readonly FileProblem[] = [],
    /** What each `kind: openapi` file became: its operations and the skipped ones, with why. */
    readonly openapi: readonly OpenApiSummary[] = [],
  ) {
    this.tools = [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    this.byName = new Map(this.tools.map((t) => [t.name, t]));
    this.byProviderName = new Map(this.tools.map((t) => [t.providerName, t]));
    Object.freeze(this);
  }

  /** By canonical name, or by the provider name a model saw (e.g. `weather__current`). */
  get(name: string): CompiledTool | undefined {
    return this.byName.get(name) ?? this.byProviderName.get(name);
  }

  get size(): number {
    return this.tools.length;
  }

  static empty(): Registry {
    return new Registry(0, new Date(0).toISOString(), [], []);
  }
}
