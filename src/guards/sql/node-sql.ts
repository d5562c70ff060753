import { createRequire } from 'node:module';
import { blankComments, type LexRules } from './lexer.js';
import type { SqlPolicy } from './policy.js';
import { dangerReason } from './functions.js';
import { findProblem, isNode, type Node } from './walk.js';

/** node-sql-parser's per-dialect build (only the one grammar a tool needs is loaded). */
interface AstParser {
  astify(sql: string, options: { database: string }): unknown;
}

const require = createRequire(import.meta.url);
const parsers = new Map<string, AstParser>();

function parserFor(database: 'mysql' | 'sqlite'): AstParser {
  let parser = parsers.get(database);
  if (!parser) {
    const build = require(`node-sql-parser/build/${database}`) as { Parser: new () => AstParser };
    parser = new build.Parser();
    parsers.set(database, parser);
  }
  return parser;
}

/** Statements that may appear inside a SELECT's tree only as a data-modifying CTE or subquery. */
const WRITES = new Set(['insert', 'update', 'delete', 'replace', 'merge']);

/** The judgement of MySQL or SQLite text: the server's comments blanked, then parsed and walked. */
export function nodeSqlProblem(sql: string, database: 'mysql' | 'sqlite', rules: LexRules, policy: SqlPolicy): string | undefined {
  const lexed = blankComments(sql, rules);
  if ('problem' in lexed) return lexed.problem;
  let ast: unknown;
  try {
    ast = parserFor(database).astify(lexed.text, { database });
  } catch (e) {
    if (e instanceof RangeError) return 'the statement is nested too deeply for the parser';
    const at = isNode(e) && isNode(e['location']) && isNode(e['location']['start']) ? e['location']['start']['offset'] : undefined;
    return `the ${rules.server} parser (an approximation of the server's grammar) rejects it${typeof at === 'number' ? ` at character ${at + 1}` : ''}`;
  }
  const statements = (Array.isArray(ast) ? ast : [ast]).filter((s) => s !== null && s !== undefined);
  if (statements.length === 0) return 'the statement is empty';
  if (statements.length > 1) return 'only one statement is allowed';
  const top = statements[0];
  const kind = isNode(top) && typeof top['type'] === 'string' ? top['type'] : 'this statement';
  if (kind !== 'select') return `only SELECT is allowed, not ${kind.toUpperCase()}`;
  return findProblem(top, (node) => nodeProblem(node, database, policy));
}

function nodeProblem(node: Node, database: 'mysql' | 'sqlite', policy: SqlPolicy): string | undefined {
  // SQLite runs PRAGMA x to read the table pragma_x (and an `arg` column passes its argument): PRAGMA optimize writes.
  if (database === 'sqlite' && typeof node['table'] === 'string') {
    const table = node['table'].toLowerCase();
    if (table.startsWith('pragma_')) return `a pragma table ('${node['table']}') is refused: SQLite runs the PRAGMA to read it`;
    // A table-valued function read as a table takes its arguments from WHERE (fsdir WHERE path = '/etc').
    if (table === 'fsdir' || table === 'zipfile') return `the table-valued function '${table}' is refused: ${dangerReason(table) ?? ''}`;
  }
  const type = node['type'];
  if (typeof type === 'string' && WRITES.has(type)) return `a read-only query cannot contain ${type.toUpperCase()}`;
  if (type === 'assign') return 'assigning a variable (:=) is not allowed';
  if (type === 'function' || type === 'aggr_func') {
    const parts = functionName(node['name']);
    return parts ? policy.functionProblem(parts) : 'a function call whose name the guard cannot read';
  }
  const into = node['into'];
  if (isNode(into) && (into['type'] != null || into['expr'] != null || into['keyword'] != null)) return 'SELECT … INTO is not allowed';
  if (node['locking_read'] != null || node['for_update'] != null) return 'a read-only query cannot lock rows (FOR UPDATE, FOR SHARE, LOCK IN SHARE MODE)';
  const ctes = node['with'];
  if (Array.isArray(ctes) && !policy.allowRecursive && ctes.some((c) => isNode(c) && c['recursive'] === true)) return 'WITH RECURSIVE is not allowed (it can run without bound)';
  return undefined;
}

/** `name` is a string (aggregates) or `{ name: [{ value }], schema?: { value } }`. */
function functionName(name: unknown): string[] | undefined {
  if (typeof name === 'string') return [name];
  if (!isNode(name) || !Array.isArray(name['name'])) return undefined;
  const parts: unknown[] = [...(isNode(name['schema']) ? [name['schema']['value']] : []), ...name['name'].map((p: unknown) => (isNode(p) ? p['value'] : undefined))];
  return parts.length > 0 && parts.every((p): p is string => typeof p === 'string') ? parts : undefined;
}
