import { PgParserFault, PgSyntaxError, parsePg, scanPg, type PgParseResult } from './pg-wasm.js';
import type { SqlPolicy } from './policy.js';
import { findProblem, isNode, type Node } from './walk.js';

const STATEMENT = /^[A-Z][A-Za-z]*Stmt$/;
const KEYWORDS: Record<string, string> = {
  InsertStmt: 'INSERT',
  UpdateStmt: 'UPDATE',
  DeleteStmt: 'DELETE',
  MergeStmt: 'MERGE',
  ExplainStmt: 'EXPLAIN',
  VariableSetStmt: 'SET',
  CopyStmt: 'COPY',
  DoStmt: 'DO',
  CallStmt: 'CALL',
  TransactionStmt: 'a transaction command',
};
const statementName = (key: string) => KEYWORDS[key] ?? key.replace(/Stmt$/, '').replace(/([a-z])([A-Z])/g, '$1 $2').toUpperCase();

/** PostgreSQL: the server's own grammar decides what the text is. */
export async function postgresProblem(sql: string, policy: SqlPolicy): Promise<string | undefined> {
  let tree: PgParseResult;
  try {
    tree = await parsePg(sql);
    if (sql.includes('\\')) {
      const plain = (await scanPg(sql)).find((t) => t.tokenName === 'SCONST' && t.text.startsWith("'") && t.text.includes('\\'));
      // With standard_conforming_strings off a backslash escapes the quote: the string would end elsewhere.
      if (plain) return "a backslash in a plain '…' string is refused (its meaning depends on standard_conforming_strings); use E'…' for escapes";
    }
  } catch (e) {
    if (e instanceof PgSyntaxError) return `the PostgreSQL parser rejects it: ${e.message}`;
    if (e instanceof PgParserFault) return 'the statement is nested too deeply for the parser';
    return 'the PostgreSQL parser could not be loaded';
  }
  if (tree.stmts.length === 0) return 'the statement is empty';
  if (tree.stmts.length > 1) return 'only one statement is allowed';
  const top = tree.stmts[0]?.stmt ?? {};
  const kind = Object.keys(top)[0] ?? '';
  if (kind !== 'SelectStmt') return `only SELECT is allowed, not ${statementName(kind)}`;
  return findProblem(top, (node) => nodeProblem(node, policy));
}

function nodeProblem(node: Node, policy: SqlPolicy): string | undefined {
  for (const key of Object.keys(node)) {
    if (STATEMENT.test(key) && key !== 'SelectStmt') return `a read-only query cannot contain ${statementName(key)} (a data-modifying WITH)`;
  }
  if (node['intoClause'] !== undefined) return 'SELECT … INTO creates a table';
  if (Array.isArray(node['lockingClause']) && node['lockingClause'].length > 0) return 'a read-only query cannot lock rows (FOR UPDATE, NO KEY UPDATE, SHARE, KEY SHARE)';
  const withClause = node['withClause'];
  if (isNode(withClause) && withClause['recursive'] === true && !policy.allowRecursive) return 'WITH RECURSIVE is not allowed (it can run without bound)';
  const fields = fieldNames(node);
  for (const name of fields) {
    const problem = policy.fieldProblem(name);
    if (problem !== undefined) return problem;
  }
  const call = node['FuncCall'];
  if (isNode(call)) {
    const parts = Array.isArray(call['funcname']) ? call['funcname'].map((p: unknown) => (isNode(p) && isNode(p['String']) ? p['String']['sval'] : undefined)) : [];
    if (parts.length === 0 || !parts.every((p): p is string => typeof p === 'string')) return 'a function call whose name the guard cannot read';
    return policy.functionProblem(parts);
  }
  return undefined;
}

const sval = (p: unknown) => (isNode(p) && isNode(p['String']) && typeof p['String']['sval'] === 'string' ? [p['String']['sval']] : []);

/** The field names of `a.b.c` (all but the first) and of `(expr).f.g`: each may be a call in attribute notation. */
function fieldNames(node: Node): string[] {
  const ref = node['ColumnRef'];
  if (isNode(ref) && Array.isArray(ref['fields'])) return ref['fields'].slice(1).flatMap(sval);
  const ind = node['A_Indirection'];
  if (isNode(ind) && Array.isArray(ind['indirection'])) return ind['indirection'].flatMap(sval);
  return [];
}
