import { createRequire } from 'node:module';

/**
 * PostgreSQL's own parser (libpg_query, the server's grammar and lexer compiled to WASM, shipped
 * in the `libpg-query` package). Its JS wrapper keeps one instance for the process; this one can
 * replace it: a stack overflow inside the WASM code (a tree nested thousands deep) leaves that
 * instance's stack pointer and heap unusable, and every later parse would fail.
 */
interface PgQueryModule {
  _malloc(size: number): number;
  _free(ptr: number): void;
  _wasm_parse_query_raw(ptr: number): number;
  _wasm_free_parse_result(ptr: number): void;
  _wasm_scan(ptr: number): number;
  _wasm_free_string(ptr: number): void;
  getValue(ptr: number, type: 'i32'): number;
  UTF8ToString(ptr: number): string;
  stringToUTF8(text: string, ptr: number, max: number): void;
  lengthBytesUTF8(text: string): number;
}

export interface PgParseResult {
  readonly stmts: readonly { readonly stmt?: Readonly<Record<string, unknown>> }[];
}

export interface PgToken {
  readonly text: string;
  readonly tokenName: string;
}

/** The grammar rejects the text (as the server would). */
export class PgSyntaxError extends Error {}
/** The parser itself failed (too deep a tree); the instance was dropped and the next call loads a new one. */
export class PgParserFault extends Error {}

const require = createRequire(import.meta.url);
let loading: Promise<PgQueryModule> | undefined;

/** Loads the WASM module once (about 20 ms), on first use or when a tool with the guard compiles. */
export function loadPgParser(): Promise<PgQueryModule> {
  loading ??= (require('libpg-query/wasm/libpg-query.js') as () => Promise<PgQueryModule>)().catch((e: unknown) => {
    loading = undefined;
    throw e;
  });
  return loading;
}

function run<T>(m: PgQueryModule, sql: string, use: (ptr: number) => T): T {
  let ptr = 0;
  let sound = true;
  try {
    const size = m.lengthBytesUTF8(sql) + 1;
    ptr = m._malloc(size);
    m.stringToUTF8(sql, ptr, size);
    return use(ptr);
  } catch (e) {
    if (e instanceof PgSyntaxError) throw e;
    sound = false;
    if (loading !== undefined) loading = undefined; // drop the instance: its memory may be inconsistent
    throw new PgParserFault(e instanceof Error ? e.message : String(e));
  } finally {
    if (sound && ptr) m._free(ptr);
  }
}

export async function parsePg(sql: string): Promise<PgParseResult> {
  const m = await loadPgParser();
  return run(m, sql, (ptr) => {
    const result = m._wasm_parse_query_raw(ptr);
    if (!result) throw new Error('the parser could not allocate memory');
    try {
      const tree = m.getValue(result, 'i32');
      const error = m.getValue(result + 8, 'i32');
      if (error) throw new PgSyntaxError(m.UTF8ToString(m.getValue(error, 'i32')));
      return JSON.parse(m.UTF8ToString(tree)) as PgParseResult;
    } finally {
      m._wasm_free_parse_result(result);
    }
  });
}

/** The server's lexer alone: each token with its exact text. */
export async function scanPg(sql: string): Promise<readonly PgToken[]> {
  const m = await loadPgParser();
  return run(m, sql, (ptr) => {
    const result = m._wasm_scan(ptr);
    let text: string;
    try {
      text = m.UTF8ToString(result);
    } finally {
      m._wasm_free_string(result);
    }
    if (!text.startsWith('{')) throw new PgSyntaxError(text);
    return (JSON.parse(text) as { tokens?: PgToken[] }).tokens ?? [];
  });
}
