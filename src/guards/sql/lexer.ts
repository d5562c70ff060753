/**
 * node-sql-parser approximates the MySQL and SQLite grammars, and it does not lex comments as the
 * servers do (it ends a `--` comment at a carriage return, takes `--x` and `#` for comments where
 * the server does not, drops MySQL's executed `/*! … *\/`). So comments are found here by the
 * server's rules and blanked (same length, so positions hold) before the parser sees the text; what
 * the two could read differently is refused. The text sent upstream is still the original.
 */
export interface LexRules {
  readonly server: 'MySQL' | 'SQLite';
  /** `#` starts a line comment (MySQL); else it is refused (an SQLite parameter sigil the parser reads as a comment). */
  readonly hashComments: boolean;
  /** `--` is a comment only when a space or control character follows (MySQL). */
  readonly dashNeedsSpace: boolean;
  /** `/*! … *\/` and `/*M! … *\/` are executed by the server (MySQL, MariaDB). */
  readonly executableComments: boolean;
  /** An unclosed `/*` runs to the end (SQLite) instead of being an error. */
  readonly openCommentToEnd: boolean;
  /** `[name]` quotes a name (SQLite). */
  readonly brackets: boolean;
}

/** Parentheses deeper than this are refused: the parser is recursive and slows down with depth. */
export const MAX_NESTING = 100;

const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/;
const blank = (s: string) => s.replace(/[^\n]/g, ' ');

function closingQuote(sql: string, from: number, quote: string): number {
  let at = from + 1;
  for (;;) {
    const end = sql.indexOf(quote, at);
    if (end < 0 || sql[end + 1] !== quote) return end;
    at = end + 2; // a doubled quote stands for itself
  }
}

/** The text the parser should judge (comments blanked), or why the text is refused. */
export function blankComments(sql: string, rules: LexRules): { text: string } | { problem: string } {
  const refuse = (problem: string) => ({ problem });
  if (sql.includes('\\')) return refuse(`a backslash is refused (in ${rules.server} its meaning in strings depends on the server's settings)`);
  if (CONTROL.test(sql)) return refuse('control characters are refused');
  if (/\r(?!\n)/.test(sql)) return refuse('a carriage return not followed by a line feed is refused');
  let out = '';
  let depth = 0;
  let ended = false; // after the statement's ';' only blanks and comments may follow
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    const next = sql[i + 1];
    let end = -1;
    if (c === '#' && rules.hashComments) end = lineEnd(sql, i);
    else if (c === '-' && next === '-') {
      const after = sql[i + 2];
      if (rules.dashNeedsSpace && after !== undefined && !' \t\n\r'.includes(after)) return refuse(`'--' not followed by a space is not a comment to ${rules.server}; write '- -'`);
      end = lineEnd(sql, i);
    } else if (c === '/' && next === '*') {
      if (rules.executableComments && /^\/\*M?!/.test(sql.slice(i, i + 4))) return refuse(`${rules.server} runs the text of a /*! … */ comment: refused`);
      const close = sql.indexOf('*/', i + 2);
      if (close < 0 && !rules.openCommentToEnd) return refuse('a /* comment is not closed');
      end = close < 0 ? sql.length : close + 2;
    }
    if (end >= 0) {
      out += blank(sql.slice(i, end));
      i = end;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      out += c;
      i++;
      continue;
    }
    if (ended && c !== ';') return refuse('only one statement is allowed');
    if (c === "'" || c === '"' || c === '`') {
      const close = closingQuote(sql, i, c);
      if (close < 0) return refuse('a quoted string or name is not closed');
      out += sql.slice(i, close + 1);
      i = close + 1;
      continue;
    }
    if (c === '#') return refuse(`'#' is refused (${rules.server} does not read it as a comment, the parser does)`);
    if (c === '[' && rules.brackets) return refuse('a [bracketed] name is refused: quote it with double quotes');
    if (c === ';') ended = true;
    if (c === '(' && ++depth > MAX_NESTING) return refuse(`parentheses nest deeper than ${MAX_NESTING}`);
    if (c === ')') depth--;
    out += c;
    i++;
  }
  return { text: out };
}

function lineEnd(sql: string, from: number): number {
  const nl = sql.indexOf('\n', from);
  return nl < 0 ? sql.length : nl;
}
