import type { LexRules } from './lexer.js';
import { nodeSqlProblem } from './node-sql.js';
import type { SqlPolicy } from './policy.js';

/** SQLite's tokenizer (tokenize.c): `--` always comments, `#` names a parameter, an open `/*` runs to the end. */
const RULES: LexRules = { server: 'SQLite', hashComments: false, dashNeedsSpace: false, executableComments: false, openCommentToEnd: true, brackets: true };

export function sqliteProblem(sql: string, policy: SqlPolicy): string | undefined {
  return nodeSqlProblem(sql, 'sqlite', RULES, policy);
}
