import type { LexRules } from './lexer.js';
import { nodeSqlProblem } from './node-sql.js';
import type { SqlPolicy } from './policy.js';

/** MySQL's lexical rules (sql_lex.cc): `#` and `-- ` comments, and comments it executes. */
const RULES: LexRules = { server: 'MySQL', hashComments: true, dashNeedsSpace: true, executableComments: true, openCommentToEnd: false, brackets: false };

export function mysqlProblem(sql: string, policy: SqlPolicy): string | undefined {
  return nodeSqlProblem(sql, 'mysql', RULES, policy);
}
