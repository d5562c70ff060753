/**
 * Read-only SQL: one statement, and it is a SELECT (or a WITH … SELECT). Comments and quoted text
 * are blanked out first, so neither a ';' nor a keyword can hide in them.
 */
const WRITES = /\b(insert|update|delete|merge|upsert|replace|drop|alter|create|truncate|grant|revoke|into|copy|call|exec|execute|lock|vacuum|attach|detach|pragma|set|begin|commit|rollback|savepoint|load|handler|do)\b/i;

export function stripSql(sql: string): string {
  return sql
    .replace(/--[^\n]*/g, ' ')
    .replace(/\/\*[\s\S]*?(\*\/|$)/g, ' ')
    .replace(/'(?:[^']|'')*('|$)/g, "''")
    .replace(/"(?:[^"]|"")*("|$)/g, '""')
    .replace(/`[^`]*(`|$)/g, '``')
    .replace(/\$(\w*)\$[\s\S]*?(\$\1\$|$)/g, "''");
}

export function readOnlySqlProblem(sql: string): string | undefined {
  const text = stripSql(sql).trim().replace(/;\s*$/, '');
  if (text === '') return 'the statement is empty';
  if (text.includes(';')) return 'only one statement is allowed';
  const first = /^\(*\s*(\w+)/.exec(text)?.[1]?.toLowerCase();
  if (first !== 'select' && first !== 'with') return `only SELECT is allowed, not ${first?.toUpperCase() ?? 'this'}`;
  const write = WRITES.exec(text);
  if (write) return `a read-only query cannot use ${write[1]?.toUpperCase()}`;
  if (/\bfor\s+(update|share)\b/i.test(text)) return 'a read-only query cannot lock rows';
  return undefined;
}
