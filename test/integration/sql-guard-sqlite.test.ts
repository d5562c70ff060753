import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import { compileReadOnlySql } from '../../src/guards/sql/index.js';

/** The part of sql.js (SQLite compiled to WASM, in process) used here. */
interface SqliteDb {
  exec(sql: string): { columns: string[]; values: unknown[][] }[];
  run(sql: string): void;
}
const require = createRequire(import.meta.url);
const initSqlJs = require('sql.js') as () => Promise<{ Database: new () => SqliteDb }>;
const parser = new (require('node-sql-parser/build/sqlite') as { Parser: new () => { astify(sql: string, o: object): unknown } }).Parser();
/** The calls node-sql-parser alone finds in the text. */
const parserCalls = (sql: string) => (JSON.stringify(parser.astify(sql, { database: 'sqlite' })).match(/"type":"function"/g) ?? []).length;

/**
 * node-sql-parser approximates SQLite's grammar, so the guard refuses what the two lex
 * differently. Each such refusal is shown here to be a real difference on SQLite itself: the
 * server runs a call the parser never saw, or a second statement.
 */
describe('readOnlySql (sqlite) on a real SQLite', () => {
  let db: SqliteDb;
  const guard = compileReadOnlySql({ dialect: 'sqlite' });
  const count = () => db.exec('SELECT count(*) FROM t')[0]!.values[0]![0];

  let sqlJs: { Database: new () => SqliteDb };
  beforeAll(async () => {
    sqlJs = await initSqlJs();
  });
  beforeEach(() => {
    db = new sqlJs.Database(); // fresh: PRAGMA optimize remembers per connection what it analysed
    db.run("DROP TABLE IF EXISTS t; CREATE TABLE t (id INTEGER PRIMARY KEY, a INT, c TEXT, doc TEXT); INSERT INTO t VALUES (1, 1, 'x', '{\"k\":1}'), (2, 2, 'y', '{\"k\":2}');");
  });

  it("refuses '#', which SQLite reads as a parameter where the parser sees a comment hiding a call", async () => {
    const sql = 'SELECT 1 -#a, abs(-5)\n-1';
    expect(await guard.check(sql)).toContain("'#' is refused");
    expect(parserCalls(sql)).toBe(0);
    const [result] = db.exec(sql);
    expect(result!.columns).toEqual(['1 -#a', 'abs(-5)\n-1']);
    expect(result!.values[0]).toEqual([null, 4]);
  });

  it.each(['SELECT * FROM pragma_optimize', 'SELECT * FROM pragma_optimize WHERE arg = 65538'])('refuses the pragma table in %j, which SQLite reads by running PRAGMA optimize: ANALYZE creates sqlite_stat1', async (sql) => {
    expect(await guard.check(sql)).toContain('pragma table');
    db.run('DROP TABLE IF EXISTS sqlite_stat1; CREATE INDEX ta ON t(a)');
    db.exec('SELECT * FROM t WHERE a = 1');
    const stats = () => db.exec("SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_stat1'")[0]!.values[0]![0];
    expect(stats()).toBe(0);
    db.exec(sql);
    expect(stats()).toBe(1);
  });

  it('refuses a second statement, which SQLite runs', async () => {
    const sql = "SELECT 'a;b'; DELETE FROM t";
    expect(await guard.check(sql)).toBe('only one statement is allowed');
    db.exec(sql);
    expect(count()).toBe(0);
  });

  it.each([
    'SELECT 1',
    "SELECT t.a, json_extract(doc, '$.k'), typeof(a), printf('%d', a), iif(a > 1, 'big', 'small') FROM t -- comment\nWHERE a > 0",
    "/* c */ WITH x AS (SELECT a, c FROM t) SELECT c, count(*), group_concat(a) FROM x GROUP BY c HAVING count(*) >= 1",
    "SELECT value FROM json_each('[1,2]')",
    "SELECT 'it''s; DELETE FROM t', \"a\" FROM t",
    'SELECT a FROM t WHERE a IN (SELECT a FROM t WHERE c = \'x\') ORDER BY a DESC LIMIT 1 OFFSET 0',
    'SELECT 1 /* an open comment runs to the end; DELETE FROM t',
  ])('allows %j, which SQLite runs without changing anything', async (sql) => {
    expect(await guard.check(sql)).toBeUndefined();
    const before = JSON.stringify(db.exec('SELECT * FROM t ORDER BY id'));
    db.exec(sql);
    expect(JSON.stringify(db.exec('SELECT * FROM t ORDER BY id'))).toBe(before);
  });
});
