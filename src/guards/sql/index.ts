import { mysqlProblem } from './mysql.js';
import { compilePolicy, type ReadOnlySqlOptions, type SqlDialect, type SqlPolicy } from './policy.js';
import { loadPgParser } from './pg-wasm.js';
import { postgresProblem } from './postgres.js';
import { sqliteProblem } from './sqlite.js';

export { GuardConfigError, type ReadOnlySqlOptions, type SqlDialect } from './policy.js';

/** Longer text is refused: a check runs on every call and must stay cheap. */
export const MAX_SQL_LENGTH = 10_000;

const JUDGES: Record<SqlDialect, (sql: string, policy: SqlPolicy) => string | undefined | Promise<string | undefined>> = {
  postgres: postgresProblem,
  mysql: mysqlProblem,
  sqlite: sqliteProblem,
};
const LABELS: Record<SqlDialect, string> = { postgres: 'PostgreSQL', mysql: 'MySQL', sqlite: 'SQLite' };
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export interface CompiledSqlGuard {
  readonly allowed: string;
  /** Why the value is refused, or undefined when it is one read-only SELECT. Never throws. */
  readonly check: (value: unknown) => Promise<string | undefined>;
}

/** Compiles `readOnlySql` (throws GuardConfigError on a bad option); `true` means PostgreSQL. */
export function compileReadOnlySql(spec: true | ReadOnlySqlOptions): CompiledSqlGuard {
  const options: ReadOnlySqlOptions = spec === true ? { dialect: 'postgres' } : spec;
  const policy = compilePolicy(options);
  const judge = JUDGES[options.dialect];
  if (options.dialect === 'postgres') loadPgParser().catch(() => undefined); // warm up; a failure is retried on first use
  return {
    allowed: `a single read-only SELECT statement (${LABELS[options.dialect]})`,
    async check(value) {
      const problem = textProblem(value);
      if (problem !== undefined) return problem;
      try {
        return await judge(value as string, policy);
      } catch {
        return 'the SQL guard could not judge this statement';
      }
    },
  };
}

function textProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return 'not a SQL string';
  if (value.length > MAX_SQL_LENGTH) return `the statement is longer than ${MAX_SQL_LENGTH} characters`;
  if (value.includes('\0')) return 'a NUL character is refused';
  if (LONE_SURROGATE.test(value)) return 'the text is not valid Unicode';
  if (value.trim() === '') return 'the statement is empty';
  return undefined;
}
