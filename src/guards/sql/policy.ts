import { DEFAULT_FUNCTIONS, dangerReason } from './functions.js';
import { PG_VOLATILE_ONE_ARG } from './pg-attribute.js';

export type SqlDialect = 'postgres' | 'mysql' | 'sqlite';

/** The object form of `readOnlySql` (SPEC §6); `true` is `{ dialect: postgres }`. */
export interface ReadOnlySqlOptions {
  readonly dialect: SqlDialect;
  readonly allowFunctions?: readonly string[];
  readonly denyFunctions?: readonly string[];
  readonly allowRecursive?: boolean;
}

/** A guard option that cannot be compiled; `path` is relative to the guard entry. */
export class GuardConfigError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

/** What a parsed statement is judged against. */
export interface SqlPolicy {
  readonly dialect: SqlDialect;
  readonly allowRecursive: boolean;
  /** The refusal of one function call, named by its parts as the parser reports them. */
  functionProblem(parts: readonly string[]): string | undefined;
  /** The refusal of a field `x.name` / `(expr).name`, which PostgreSQL may run as the call `name(x)`. */
  fieldProblem(name: string): string | undefined;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*){0,2}$/;

/**
 * The key a name is judged by. PostgreSQL folds unquoted names itself (the parser reports them as
 * the database stores them) and `pg_catalog.x` is the built-in `x`; MySQL and SQLite function names
 * are case-insensitive. A name qualified by any other schema is a user function, never the built-in.
 */
function keyOf(dialect: SqlDialect, parts: readonly string[]): string {
  const named = dialect === 'postgres' ? parts : parts.map((p) => p.toLowerCase());
  if (dialect === 'postgres' && named.length === 2 && named[0] === 'pg_catalog') return named[1]!;
  return named.join('.');
}

function names(dialect: SqlDialect, list: readonly string[] | undefined, key: string): string[] {
  return (list ?? []).map((name, i) => {
    if (!NAME.test(name)) throw new GuardConfigError(`/readOnlySql/${key}/${i}`, `'${name}' is not a function name (letters, digits, _ and $, optionally schema-qualified)`);
    return keyOf(dialect, name.split('.'));
  });
}

export function compilePolicy(options: ReadOnlySqlOptions): SqlPolicy {
  const { dialect } = options;
  const allowed = new Set([...DEFAULT_FUNCTIONS[dialect], ...names(dialect, options.allowFunctions, 'allowFunctions')]);
  // A denial is compared without case, so a miscased entry cannot leave the function allowed.
  const denied = new Set(names(dialect, options.denyFunctions, 'denyFunctions').map((n) => n.toLowerCase()));
  return {
    dialect,
    allowRecursive: options.allowRecursive ?? false,
    functionProblem(parts) {
      // A quoted name holding a dot ("s.f", `s.f`) is one name, not schema s: it must not match the entry s.f.
      if (parts.some((p) => p.includes('.'))) return `the function name '${parts.join('.')}' holds a quoted '.'`;
      const key = keyOf(dialect, parts);
      if (denied.has(key.toLowerCase())) return `the function '${key}' is denied for this tool`;
      if (allowed.has(key)) return undefined;
      const why = key.includes('.') ? undefined : dangerReason(key.toLowerCase());
      if (why) return `the function '${key}' is not allowed: ${why}`;
      const qualified = key.includes('.') ? ' (a schema-qualified name is a user function, not the built-in)' : '';
      return `the function '${key}' is not on this tool's list of allowed functions${qualified}`;
    },
    fieldProblem(name) {
      if (allowed.has(name) && !denied.has(name.toLowerCase())) return undefined;
      const why = denied.has(name.toLowerCase()) ? 'it is denied for this tool' : (dangerReason(name) ?? (PG_VOLATILE_ONE_ARG.has(name) ? 'it is a volatile function' : undefined));
      return why && `the field '.${name}' calls the function '${name}' (PostgreSQL's attribute notation), which is not allowed: ${why}`;
    },
  };
}
