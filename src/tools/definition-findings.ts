import { scanDefinition } from '../guards/result/index.js';
import type { Finding, FindingKind } from '../guards/result/types.js';
import { pointerSegment } from '../util/source.js';

/**
 * Tool poisoning (issue 26 item 2): the injection and invisible-character checks over everything a
 * tool's definition tells a model. Used for MCP tools at import (src/mcp/pins.ts) and callable for
 * OpenAPI operations. Pure: no I/O, linear in the definition's size (an explicit stack, so a
 * deeply nested schema cannot overflow the call stack).
 */

/** What a definition says; the shape of an MCP tool and of an operation turned into a tool. */
export interface DefinitionText {
  readonly name: string;
  readonly title?: string | undefined;
  readonly description?: string | undefined;
  readonly inputSchema?: unknown;
  readonly outputSchema?: unknown;
  /** MCP annotations (their `title` reaches clients too). */
  readonly annotations?: unknown;
}

/** The definition's part a finding is in. */
export type DefinitionField = 'name' | 'title' | 'description' | 'inputSchema' | 'outputSchema' | 'annotations';

/** One kind of finding in one string of a definition: where (never the text), how often, byte offsets in that string. */
export interface DefinitionFinding {
  readonly kind: FindingKind;
  readonly field: DefinitionField;
  /** JSON Pointer into the definition (`/inputSchema/properties/path/description`). */
  readonly path: string;
  /** The finding is in an object's key (a property name), not in a value. */
  readonly key?: true;
  readonly count: number;
  readonly offsets: readonly (readonly [number, number])[];
}

export type DefinitionScanner = (text: string) => readonly Finding[];


/**
 * Every finding in the definition, in the order of its fields; empty when it is clean. `clean`:
 * objects and arrays already found clean (filled as it goes), so definitions sharing subtrees
 * (an OpenAPI document's schemas, dereferenced into many operations) walk each once.
 */
export function definitionFindings(def: DefinitionText, scan: DefinitionScanner = scanDefinition, clean?: WeakSet<object>): DefinitionFinding[] {
  const out: DefinitionFinding[] = [];
  const check = (text: string, field: DefinitionField, path: string, key: boolean) => {
    if (text === '') return;
    for (const f of scan(text)) out.push({ kind: f.kind, field, path, ...(key ? { key: true as const } : {}), count: f.count, offsets: f.offsets });
  };
  check(def.name, 'name', '/name', false);
  if (typeof def.title === 'string') check(def.title, 'title', '/title', false);
  if (typeof def.description === 'string') check(def.description, 'description', '/description', false);
  for (const field of ['inputSchema', 'outputSchema', 'annotations'] as const) {
    const root = def[field];
    if (root === undefined) continue;
    // Depth-first, in document order: keys (property names, `$defs` names …) and every string value
    // (descriptions, titles, enum values, defaults, examples, patterns).
    // An entry [node, path, mark] with a mark is a container's exit: nothing found since its entry makes it clean.
    const stack: [unknown, string, number?][] = [[root, `/${field}`]];
    while (stack.length > 0) {
      const [node, path, mark] = stack.pop()!;
      if (mark !== undefined) {
        if (out.length === mark) clean?.add(node as object);
        continue;
      }
      if (typeof node === 'string') check(node, field, path, false);
      else if (node === null || typeof node !== 'object' || clean?.has(node)) continue;
      else if (Array.isArray(node)) {
        if (clean) stack.push([node, path, out.length]);
        for (let i = node.length - 1; i >= 0; i--) stack.push([node[i], `${path}/${i}`]);
      } else {
        if (clean) stack.push([node, path, out.length]);
        const entries = Object.entries(node);
        for (let i = entries.length - 1; i >= 0; i--) {
          const [k, v] = entries[i]!;
          stack.push([v, `${path}/${pointerSegment(k)}`]);
        }
        for (const [k] of entries) check(k, field, `${path}/${pointerSegment(k)}`, true);
      }
    }
  }
  return out;
}

/** The distinct kinds of a list of findings, for one-line summaries ("injection, invisible"). */
export function findingKinds(findings: readonly { readonly kind: FindingKind }[]): FindingKind[] {
  return [...new Set(findings.map((f) => f.kind))];
}
