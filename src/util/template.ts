/**
 * `{{name}}` templates, parsed once at load time so a call does no regex work.
 * `{{arguments}}` is the whole arguments object; `{{a.b}}` reaches into nested objects.
 */

type Part = string | { readonly path: readonly string[] };

export class Template {
  constructor(
    readonly parts: readonly Part[],
    /** The template is exactly one placeholder, e.g. "{{arguments}}": it can keep the value's type. */
    readonly single: { readonly path: readonly string[] } | undefined,
    readonly names: readonly string[],
  ) {}
}

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*\}\}/g;

export function parseTemplate(text: string): Template {
  const parts: Part[] = [];
  const names: string[] = [];
  let last = 0;
  for (const m of text.matchAll(PLACEHOLDER)) {
    if (m.index > last) parts.push(text.slice(last, m.index));
    const name = m[1] as string;
    parts.push({ path: name.split('.') });
    names.push(name);
    last = m.index + m[0].length;
  }
  if (last < text.length) parts.push(text.slice(last));
  const only = parts.length === 1 && typeof parts[0] !== 'string' ? parts[0] : undefined;
  return new Template(parts, only, names);
}

export function lookup(args: Readonly<Record<string, unknown>>, path: readonly string[]): unknown {
  if (path.length === 1 && path[0] === 'arguments') return args;
  let cur: unknown = args;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, seg)) return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur;
}

/** A value as text: strings as they are, missing as empty, everything else as JSON. */
export function asText(v: unknown): string {
  if (v === undefined || v === null) return '';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

export function render(t: Template, args: Readonly<Record<string, unknown>>, encode: (s: string) => string = (s) => s): string {
  let out = '';
  for (const p of t.parts) out += typeof p === 'string' ? p : encode(asText(lookup(args, p.path)));
  return out;
}

/** A JSON body template: strings are templates; a string that is one placeholder keeps the value's type. */
export type JsonTemplate = Template | readonly JsonTemplate[] | { readonly [k: string]: JsonTemplate } | number | boolean | null;

export function parseJsonTemplate(value: unknown): JsonTemplate {
  if (typeof value === 'string') return parseTemplate(value);
  if (Array.isArray(value)) return value.map(parseJsonTemplate);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, JsonTemplate> = {};
    for (const [k, v] of Object.entries(value)) out[k] = parseJsonTemplate(v);
    return out;
  }
  return value as number | boolean | null;
}

export function renderJson(t: JsonTemplate, args: Readonly<Record<string, unknown>>): unknown {
  if (t instanceof Template) return t.single ? lookup(args, t.single.path) : render(t, args);
  if (Array.isArray(t)) return t.map((x: JsonTemplate) => renderJson(x, args));
  if (t !== null && typeof t === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(t)) {
      const r = renderJson(v as JsonTemplate, args);
      if (r !== undefined) out[k] = r;
    }
    return out;
  }
  return t;
}
