import { sha256Hex } from '../../util/hash.js';
import type { ResultGuardFile } from '../../tools/result-guards-schema.js';
import { compileTextGuards } from './index.js';
import type { TextGuard } from './types.js';

/** The kinds `resultGuards:` entries merge by: one entry per kind survives the layering. */
export type ResultGuardKind = 'secrets' | 'pii' | 'injection' | 'invisible' | 'links' | 'maxBlocks' | 'webhook';

export interface CompiledWebhook {
  readonly url: string;
  readonly timeoutMs: number;
  readonly failOpen: boolean;
  readonly headers: Readonly<Record<string, string>>;
}

/** A tool's result guards, compiled once at load (CompiledTool.resultGuards). */
export interface CompiledResultGuards {
  /** The entries in force after merging (what the console and `toolgate check` may show). */
  readonly effective: readonly ResultGuardFile[];
  readonly text: readonly TextGuard[];
  readonly maxBlocks: { readonly max: number; readonly action: 'truncate' | 'refuse' } | undefined;
  readonly webhook: CompiledWebhook | undefined;
  /** Hash of `effective`: cache keys carry it, so a reload that changes the guards never serves a result guarded by the old ones. */
  readonly fingerprint: string;
  /** Nothing to do (no guard at all). */
  readonly empty: boolean;
}

export function guardKindOf(g: ResultGuardFile): ResultGuardKind {
  if ('secrets' in g) return 'secrets';
  if ('pii' in g) return 'pii';
  if ('injection' in g) return 'injection';
  if ('invisible' in g) return 'invisible';
  if ('links' in g) return 'links';
  if ('maxBlocks' in g) return 'maxBlocks';
  return 'webhook';
}

function isOff(g: ResultGuardFile): boolean {
  if ('secrets' in g) return g.secrets === 'off';
  if ('pii' in g) return g.action === 'off';
  if ('injection' in g) return g.injection === 'off';
  if ('invisible' in g) return g.invisible === 'off';
  if ('links' in g) return g.links.action === 'off';
  if ('webhook' in g) return g.webhook === 'off';
  return false;
}

/**
 * Layers merged by kind, lowest first (config defaults, then the file's, then the tool's own): a
 * layer's entry for a kind replaces the one below; `off` removes the kind. Kinds keep the order in
 * which they first appear (the stage runs them in its own fixed order anyway).
 */
export function mergeResultGuards(...layers: readonly (readonly ResultGuardFile[] | undefined)[]): ResultGuardFile[] {
  const byKind = new Map<ResultGuardKind, ResultGuardFile>();
  for (const layer of layers) for (const g of layer ?? []) byKind.set(guardKindOf(g), g);
  return [...byKind.values()].filter((g) => !isOff(g));
}

/** Compiled lists by their JSON: thousands of imported tools share a handful of lists. */
const compiledByJson = new Map<string, CompiledResultGuards>();
const MAX_SHARED = 512;

/**
 * The one entry point of tool compilation (tool files, MCP server files, OpenAPI files): the
 * config's defaults < the file's list < the tool's own, compiled once (never per call).
 */
export function resultGuardsOf(
  defaults: readonly ResultGuardFile[] | undefined,
  fileLevel: readonly ResultGuardFile[] | undefined,
  toolLevel: readonly ResultGuardFile[] | undefined,
): CompiledResultGuards {
  return compileResultGuards(mergeResultGuards(defaults, fileLevel, toolLevel));
}

export function compileResultGuards(effective: readonly ResultGuardFile[]): CompiledResultGuards {
  const json = JSON.stringify(effective);
  const shared = compiledByJson.get(json);
  if (shared) return shared;
  let maxBlocks: CompiledResultGuards['maxBlocks'];
  let webhook: CompiledWebhook | undefined;
  for (const g of effective) {
    if ('maxBlocks' in g) maxBlocks = { max: g.maxBlocks, action: g.action === 'truncate' ? 'truncate' : 'refuse' };
    if ('webhook' in g && g.webhook !== 'off') {
      webhook = { url: g.webhook.url, timeoutMs: g.webhook.timeoutMs ?? 500, failOpen: g.webhook.failOpen ?? false, headers: { ...(g.webhook.headers ?? {}) } };
    }
  }
  const text = compileTextGuards(effective);
  const compiled: CompiledResultGuards = Object.freeze({
    effective: Object.freeze([...effective]),
    text,
    maxBlocks,
    webhook,
    fingerprint: sha256Hex(json).slice(0, 16),
    empty: text.length === 0 && !maxBlocks && !webhook,
  });
  if (compiledByJson.size >= MAX_SHARED) compiledByJson.delete(compiledByJson.keys().next().value as string);
  compiledByJson.set(json, compiled);
  return compiled;
}

/** No result guards (tools built outside a load: tests, synthetic tools). */
export const NO_RESULT_GUARDS: CompiledResultGuards = compileResultGuards([]);
