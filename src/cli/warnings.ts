import type { McpServerEntry } from '../tools/mcp-file.js';
import type { CompiledTool } from '../tools/types.js';
import { toPointer, type FileProblem, type ParsedSource } from '../util/source.js';
import type { CheckWarning, WarningRule } from './types.js';
import { importedToolName } from '../mcp/import.js';

/** The warning rules of `toolgate check` on what the loader compiled, with the files as written. */

export type RawOf = (file: string) => ParsedSource | undefined;

function at(rule: WarningRule, file: string, raw: ParsedSource | undefined, path: string, message: string): CheckWarning {
  const line = raw?.lineOf(path);
  const p: FileProblem = line === undefined ? { file, path, message } : { file, line, path, message };
  return { ...p, rule };
}

const RISKY = new Set(['destructive', 'external']);

function has(raw: ParsedSource | undefined, key: string): boolean {
  const v = raw?.value;
  return v !== null && typeof v === 'object' && !Array.isArray(v) && key in v;
}

/** A key as check weighs it: `tools` as written (undefined: none listed, so the default ["*"]). */
export interface KeyScope {
  readonly id: string;
  readonly tools?: readonly string[] | undefined;
}

/**
 * Why every key would see a tool with no `visibility.roles`, or undefined when keys are scoped.
 * `keys` are the keys that load (a key whose variable is unset is skipped, and check says so
 * once). With no key and no issuer the config warning already says every local caller has all
 * roles: repeating it per tool would bury what needs acting on.
 */
export function openToAll(
  mode: string,
  keys: readonly KeyScope[],
  issuers: readonly { issuer: string; defaultTools: readonly string[] }[] = [],
): string | undefined {
  if (mode === 'none') return 'auth mode is none';
  if (keys.length === 0 && issuers.length === 0) return undefined;
  // An issuer whose tokens see every tool unless they say otherwise is as wide as a key with "*".
  const wideIssuer = issuers.find((i) => i.defaultTools.includes('*'));
  if (wideIssuer) return `issuer '${wideIssuer.issuer}' has defaultTools ["*"]`;
  const wide = keys.filter((k) => (k.tools ?? ['*']).includes('*'));
  if (wide.length === 0) return undefined;
  const why = (k: KeyScope) => (k.tools === undefined ? `'${k.id}' (no tools list: the default is ["*"])` : `'${k.id}'`);
  const listed = wide.filter((k) => k.tools !== undefined).map(why);
  const unlisted = wide.filter((k) => k.tools === undefined).map(why);
  const parts = [
    ...(listed.length > 0 ? [`${listed.length === 1 ? 'key' : 'keys'} ${listed.join(', ')} ${listed.length === 1 ? 'has' : 'have'} tools ["*"]`] : []),
    ...(unlisted.length > 0 ? [`${unlisted.length === 1 ? 'key' : 'keys'} ${unlisted.join(', ')} ${unlisted.length === 1 ? 'sees' : 'see'} every tool`] : []),
  ];
  return parts.join(' and ');
}

export function toolWarnings(tool: CompiledTool, rawOf: RawOf, openReason: string | undefined): CheckWarning[] {
  const file = tool.source.file;
  const raw = rawOf(file);
  const out: CheckWarning[] = [];
  if (RISKY.has(tool.sideEffect) && tool.confirm === false) {
    out.push(at('confirm-off', file, raw, '/confirm', `${tool.sideEffect} tool '${tool.name}' runs without confirmation (confirm: false)`));
  }
  if (tool.visibility.roles === undefined && openReason !== undefined) {
    out.push(at('visible-to-all', file, raw, '/visibility/roles', `tool '${tool.name}' is visible to every key: no visibility.roles and ${openReason}`));
  }
  if (!has(raw, 'timeoutMs')) {
    const kinds = [...new Set(tool.backends.map((b) => b.target.kind))].join('/');
    out.push(at('default-timeout', file, raw, '/timeoutMs', `tool '${tool.name}' has no timeoutMs: uses the default ${tool.timeoutMs} ms (defaults.timeoutMs.${kinds})`));
  }
  return out;
}

export function serverWarnings(server: McpServerEntry): CheckWarning[] {
  const { spec, file, pointer } = server;
  const raw: ParsedSource = { value: undefined, lineOf: server.lineOf };
  const out: CheckWarning[] = [];
  if (spec.include === undefined) {
    const also = pointer !== '' ? ' (the mcpServers form has none: give it one with a kind: mcp-client-config file, or write a kind: mcp-server file)' : spec.exclude === undefined ? '' : ' (only an exclude list)';
    out.push(at('mcp-no-include', file, raw, `${pointer}/include`, `MCP server '${spec.name}' has no include list${also}: every tool it offers, today's and tomorrow's, is imported`));
  }
  if (spec.timeoutMs === undefined) {
    out.push(at('default-timeout', file, raw, `${pointer}/timeoutMs`, `MCP server '${spec.name}' has no timeoutMs: its tools use defaults.timeoutMs.mcp`));
  }
  for (const [tool, o] of Object.entries(spec.overrides ?? {})) {
    const effect = o.sideEffect;
    if (o.confirm === false && (effect === undefined || RISKY.has(effect))) {
      const why = effect === undefined ? 'its side effect comes from the annotations (unannotated: destructive)' : `it is ${effect}`;
      const path = `${pointer}${toPointer(['overrides', tool, 'confirm'])}`;
      out.push(at('confirm-off', file, raw, path, `MCP tool '${importedToolName(spec, tool)}' runs without confirmation (confirm: false) though ${why}`));
    }
  }
  return out;
}

/** Names, the first few of them: a document of 1,000 operations makes one warning per rule, not 1,000. */
function some(names: readonly string[]): string {
  const shown = names.slice(0, 5).map((n) => `'${n}'`).join(', ');
  return names.length > 5 ? `${shown} and ${names.length - 5} more` : shown;
}

/** The tool warnings for the operations of one kind: openapi file, one per rule. */
export function openApiWarnings(file: string, tools: readonly CompiledTool[], rawOf: RawOf, openReason: string | undefined): CheckWarning[] {
  const raw = rawOf(file);
  const out: CheckWarning[] = [];
  const risky = tools.filter((t) => RISKY.has(t.sideEffect) && t.confirm === false).map((t) => t.name);
  if (risky.length > 0) out.push(at('confirm-off', file, raw, '/overrides', `${risky.length} destructive or external operation(s) run without confirmation (confirm: false): ${some(risky)}`));
  const open = tools.filter((t) => t.visibility.roles === undefined).map((t) => t.name);
  if (open.length > 0 && openReason !== undefined) {
    out.push(at('visible-to-all', file, raw, '/overrides', `${open.length} operation(s) are visible to every key: no visibility.roles (set it per operation in overrides) and ${openReason}: ${some(open)}`));
  }
  if (!has(raw, 'timeoutMs') && tools.length > 0) {
    out.push(at('default-timeout', file, raw, '/timeoutMs', `the file has no timeoutMs: its ${tools.length} operation(s) use the default ${tools[0]?.timeoutMs} ms (defaults.timeoutMs.http) unless an override sets one`));
  }
  return out;
}
