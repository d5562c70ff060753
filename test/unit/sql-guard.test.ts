import { describe, expect, it } from 'vitest';
import { compileReadOnlySql, GuardConfigError, MAX_SQL_LENGTH, type ReadOnlySqlOptions } from '../../src/guards/sql/index.js';
import { DEFAULT_FUNCTIONS, dangerReason } from '../../src/guards/sql/functions.js';
import { PgParserFault, parsePg } from '../../src/guards/sql/pg-wasm.js';
import { loadToolText } from '../../src/tools/loader.js';
import { loadConfig } from '../../src/config/load.js';
import { PG_LEXICAL_BYPASSES, PG_READS } from '../helpers/sql-cases.js';

const pg = compileReadOnlySql(true);
const mysql = compileReadOnlySql({ dialect: 'mysql' });
const sqlite = compileReadOnlySql({ dialect: 'sqlite' });
const guard = (options: ReadOnlySqlOptions) => compileReadOnlySql(options);

describe('readOnlySql, postgres (the real PostgreSQL parser)', () => {
  it.each(PG_LEXICAL_BYPASSES)('refuses the lexical bypass %j as two statements', async (sql) => {
    expect(await pg.check(sql)).toBe('only one statement is allowed');
  });

  it.each([
    "SELECT lo_import('/etc/passwd')",
    "SELECT lo_export(16384, '/tmp/x')",
    "SELECT lo_from_bytea(0, 'x')",
    'SELECT lo_unlink(16384)',
    "SELECT pg_read_file('/etc/passwd')",
    "SELECT pg_read_binary_file('/etc/passwd')",
    "SELECT * FROM pg_ls_dir('.')",
    "SELECT pg_stat_file('PG_VERSION')",
    "SELECT set_config('search_path', 'evil', false)",
    "SELECT nextval('s')",
    "SELECT setval('s', 1)",
    "SELECT currval('s')",
    'SELECT pg_advisory_lock(1)',
    'SELECT pg_try_advisory_lock(1)',
    'SELECT pg_advisory_xact_lock_shared(1)',
    'SELECT pg_terminate_backend(1)',
    'SELECT pg_cancel_backend(1)',
    'SELECT pg_reload_conf()',
    'SELECT pg_rotate_logfile()',
    "SELECT dblink_exec('host=x', 'DELETE FROM t')",
    "SELECT * FROM dblink('host=x', 'SELECT 1') AS r(a int)",
    'SELECT pg_sleep(10)',
    "SELECT pg_sleep_for('10 s')",
    'SELECT txid_current()',
    "SELECT query_to_xml('DELETE FROM t RETURNING 1', true, false, '')",
  ])('refuses the dangerous function in %s', async (sql) => {
    expect(await pg.check(sql)).toMatch(/^the function '\w+' is not allowed: /);
  });

  it.each([
    ['SELECT pg_catalog.pg_sleep(1)', 'pg_sleep'],
    ['SELECT * FROM pg_catalog.pg_sleep(1)', 'pg_sleep'],
    ["SELECT lower(pg_read_file('x'))", 'pg_read_file'],
    ['SELECT a FROM t WHERE a = (SELECT pg_sleep(1))', 'pg_sleep'],
    ["WITH x AS (SELECT nextval('s')) SELECT * FROM x", 'nextval'],
    ['SELECT a FROM t ORDER BY pg_sleep(1)', 'pg_sleep'],
    ['SELECT CASE WHEN a > 0 THEN pg_sleep(1) END FROM t', 'pg_sleep'],
    ['SELECT * FROM t, LATERAL (SELECT pg_advisory_lock(t.a)) l', 'pg_advisory_lock'],
    ['VALUES (pg_sleep(1))', 'pg_sleep'],
    ['SELECT 1 UNION SELECT pg_sleep(1)', 'pg_sleep'],
    ['SELECT sum(pg_sleep(1)) OVER (PARTITION BY a) FROM t', 'pg_sleep'],
    ['SELECT my_function(a) FROM t', 'my_function'],
    ["SELECT public.lower('x')", 'public.lower'],
    ['SELECT "PG_SLEEP"(1)', 'PG_SLEEP'],
  ])('refuses %s wherever the call is (%s)', async (sql, name) => {
    expect(await pg.check(sql)).toContain(`the function '${name}'`);
  });

  it.each([
    ['SELECT (42).pg_advisory_lock', 'pg_advisory_lock'],
    ['SELECT ((42).pg_advisory_lock).pg_typeof', 'pg_advisory_lock'],
    ['SELECT (42)."pg_advisory_lock"', 'pg_advisory_lock'],
    ['SELECT (42).PG_ADVISORY_LOCK', 'pg_advisory_lock'],
    ['SELECT g.pg_advisory_xact_lock FROM generate_series(1, 1) g', 'pg_advisory_xact_lock'],
    ["SELECT ('s').nextval", 'nextval'],
    ['SELECT (0.3).pg_sleep', 'pg_sleep'],
    ['SELECT a FROM t WHERE (SELECT x.pg_sleep FROM unnest(ARRAY[1]) x) IS NULL', 'pg_sleep'],
    ["SELECT ('/etc/passwd').pg_read_file", 'pg_read_file'],
    ["SELECT ('x').lo_import", 'lo_import'],
    ["SELECT ('SELECT 1').ts_stat", 'ts_stat'],
    ["SELECT ('t_idx').gin_clean_pending_list", 'gin_clean_pending_list'],
    ["SELECT ('pg_catalog').pg_import_system_collations", 'pg_import_system_collations'],
    ['SELECT public.t.pg_sleep FROM t', 'pg_sleep'],
  ])('refuses %s: attribute notation calls %s', async (sql, name) => {
    expect(await pg.check(sql)).toContain(`the field '.${name}' calls the function '${name}' (PostgreSQL's attribute notation)`);
  });

  it('judges a field by the tool\'s lists: an allowed name passes, a denied one is refused', async () => {
    expect(await guard({ dialect: 'postgres', allowFunctions: ['pg_sleep'] }).check('SELECT (0).pg_sleep')).toBeUndefined();
    expect(await guard({ dialect: 'postgres', denyFunctions: ['name'] }).check('SELECT t.name FROM t')).toContain('denied');
    expect(await pg.check('SELECT t.name, t.c, public.t.a, (t.doc).x, (row(1, 2)).f1, t.row_to_json FROM public.t')).toBeUndefined();
  });

  it.each([
    ['SELECT * FROM t FOR UPDATE', 'lock rows'],
    ['SELECT * FROM t FOR NO KEY UPDATE', 'lock rows'],
    ['SELECT * FROM t FOR SHARE', 'lock rows'],
    ['SELECT * FROM t FOR KEY SHARE', 'lock rows'],
    ['SELECT * FROM t FOR UPDATE OF t SKIP LOCKED', 'lock rows'],
    ['SELECT * FROM (SELECT * FROM t FOR KEY SHARE) s', 'lock rows'],
    ['WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT * FROM r', 'WITH RECURSIVE'],
    ['SELECT * INTO copy FROM t', 'INTO'],
    ['SELECT * INTO TEMP copy FROM t', 'INTO'],
    ['WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d', 'DELETE'],
    ['WITH i AS (INSERT INTO t VALUES (1) RETURNING *) SELECT * FROM i', 'INSERT'],
    ['WITH u AS (UPDATE t SET a = 1 RETURNING *) SELECT * FROM u', 'UPDATE'],
    ['WITH x AS (SELECT 1), d AS (DELETE FROM t) SELECT * FROM x', 'DELETE'],
    ['DELETE FROM t', 'only SELECT is allowed, not DELETE'],
    ['-- comment\nDELETE FROM t', 'not DELETE'],
    ['UPDATE t SET a = 1', 'not UPDATE'],
    ['INSERT INTO t VALUES (1)', 'not INSERT'],
    ['MERGE INTO t USING u ON true WHEN MATCHED THEN DELETE', 'not MERGE'],
    ['DROP TABLE t', 'not DROP'],
    ['TRUNCATE t', 'not TRUNCATE'],
    ['EXPLAIN ANALYZE DELETE FROM t', 'not EXPLAIN'],
    ["COPY t TO '/tmp/x'", 'not COPY'],
    ["SET search_path = 'x'", 'not SET'],
    ['BEGIN', 'transaction'],
    ['CREATE TABLE x AS SELECT 1', 'not CREATE TABLE AS'],
    ["DO $$ BEGIN DELETE FROM t; END $$", 'not DO'],
    ['CALL p()', 'not CALL'],
    ['LOCK TABLE t', 'not LOCK'],
    ['TABLE t; DELETE FROM t', 'one statement'],
    ['SELECT 1; SELECT 2', 'one statement'],
    ['select 1;/* */ update t set a=1', 'one statement'],
  ])('refuses %j (%s)', async (sql, why) => {
    expect(await pg.check(sql)).toContain(why);
  });

  it.each([
    ['', 'empty'],
    ['   \n\t', 'empty'],
    ['-- only a comment', 'empty'],
    ['/* only a comment */', 'empty'],
    [';', 'empty'],
    ['hello world', 'parser rejects it'],
    ['SELEC 1', 'parser rejects it'],
    ["SELECT 'unterminated", 'parser rejects it'],
    ['SELECT 1 /* unterminated', 'parser rejects it'],
    ['💥', 'parser rejects it'],
    [')))', 'parser rejects it'],
    ['SELECT 1\0; DELETE FROM t', 'NUL'],
    ['SELECT \uD800', 'Unicode'],
    ["SELECT 'a\\' || 'b'", 'backslash'],
    [`SELECT 1${' '.repeat(MAX_SQL_LENGTH)}`, 'longer than'],
  ])('refuses %j (%s)', async (sql, why) => {
    expect(await pg.check(sql)).toContain(why);
  });

  it.each([42, null, { sql: 'SELECT 1' }, ['SELECT 1']])('refuses the non-string %j', async (value) => {
    expect(await pg.check(value)).toBe('not a SQL string');
  });

  it.each(PG_READS.map(([sql]) => sql))('allows %j', async (sql) => {
    expect(await pg.check(sql)).toBeUndefined();
  });

  it('answers input nested to the limit fast and keeps working', async () => {
    const deep = [
      '('.repeat(MAX_SQL_LENGTH + 1),
      `SELECT ${'('.repeat(4990)}1${')'.repeat(4990)}`,
      `SELECT ${'('.repeat(9990)}`,
      `SELECT ${Array(4996).fill('1').join('+')}`,
      `SELECT ${'a('.repeat(3330)}1${')'.repeat(3330)}`,
      `SELECT ${'(SELECT '.repeat(1000)}1${')'.repeat(1000)}`,
      `SELECT ${'NOT '.repeat(2490)}true`,
    ];
    const started = performance.now();
    for (const sql of deep) expect(await pg.check(sql)).not.toBe('the SQL guard could not judge this statement');
    expect(performance.now() - started).toBeLessThan(5000);
    expect(await pg.check('SELECT 1')).toBeUndefined();
    expect(await pg.check('SELECT 1; DELETE FROM t')).toBe('only one statement is allowed');
  });

  it('replaces the parser after it overflows its stack, instead of failing every later call', async () => {
    await expect(parsePg(`SELECT ${Array(40000).fill('1').join('+')}`)).rejects.toBeInstanceOf(PgParserFault);
    expect((await parsePg('SELECT 1')).stmts).toHaveLength(1);
    expect(await pg.check("SELECT '--'; DELETE FROM t")).toBe('only one statement is allowed');
  });
});

describe('readOnlySql, mysql (node-sql-parser behind MySQL lexical rules)', () => {
  it.each([
    ["SELECT '\\'', 1; DELETE FROM t", 'backslash'],
    ["SELECT 'a\\\\' FROM t", 'backslash'],
    ['SELECT 1 /*! ; DELETE FROM t */', '/*!'],
    ['SELECT 1 /*!50000 , sleep(5) */', '/*!'],
    ['SELECT 1 /*M! , sleep(5) */', '/*!'],
    ['SELECT 1 --x, sleep(5)', "'--' not followed by a space"],
    ["SELECT 1 # \r' \n; DELETE FROM t; -- '", 'carriage return'],
    ['SELECT 1; DELETE FROM t', 'one statement'],
    ['SELECT 1; SELECT 2', 'one statement'],
    ["SELECT 'x' ; -- ok\n DELETE FROM t", 'one statement'],
    ['SELECT sleep(5)', "function 'sleep' is not allowed"],
    ["SELECT BENCHMARK(100000000, md5('a'))", "function 'benchmark' is not allowed"],
    ["SELECT load_file('/etc/passwd')", "function 'load_file' is not allowed"],
    ["SELECT get_lock('a', 10)", "function 'get_lock' is not allowed"],
    ["SELECT release_lock('a')", "function 'release_lock' is not allowed"],
    ["SELECT master_pos_wait('log', 4)", "function 'master_pos_wait' is not allowed"],
    ['SELECT `sleep`(5)', "function 'sleep' is not allowed"],
    ['SELECT a FROM t WHERE b = (SELECT sleep(5))', "function 'sleep'"],
    ['SELECT mydb.lower(a) FROM t', "function 'mydb.lower'"],
    ['SELECT * FROM t FOR UPDATE', 'lock rows'],
    ['SELECT * FROM t LOCK IN SHARE MODE', 'lock rows'],
    ['SELECT * FROM (SELECT * FROM t FOR UPDATE) x', 'lock rows'],
    ['SELECT a INTO @x FROM t', 'INTO'],
    ["SELECT a FROM t INTO OUTFILE '/tmp/x'", 'INTO'],
    ["SELECT a FROM t INTO DUMPFILE '/tmp/x'", 'INTO'],
    ['SELECT @a := 1', 'assigning'],
    ['WITH RECURSIVE r AS (SELECT 1 UNION ALL SELECT 1 FROM r) SELECT * FROM r', 'WITH RECURSIVE'],
    ['DELETE FROM t', 'not DELETE'],
    ['UPDATE t SET a = 1', 'not UPDATE'],
    ['INSERT INTO t VALUES (1)', 'not INSERT'],
    ['SET @a = 1', 'not SET'],
    ['DO sleep(1)', 'rejects it'],
    ['HANDLER t READ FIRST', 'rejects it'],
    [`SELECT ${'('.repeat(101)}1${')'.repeat(101)}`, 'nest deeper'],
    ['('.repeat(MAX_SQL_LENGTH + 1), 'longer than'],
    ["SELECT 'open", 'not closed'],
    ['SELECT 1 /* open', 'not closed'],
    ['hello world', 'rejects it'],
    ['', 'empty'],
    ['# only a comment', 'empty'],
    ['SELECT 1\u000b', 'control'],
  ])('refuses %j (%s)', async (sql, why) => {
    expect(await mysql.check(sql)).toContain(why);
  });

  it.each([
    'SELECT 1',
    "SELECT a, b FROM t WHERE c = 'x' -- comment\n",
    'SELECT 1 # comment',
    '/* c */ SELECT 1 /*+ MAX_EXECUTION_TIME(1000) */',
    "SELECT 'it''s; DELETE FROM t', \"dq; DELETE\"",
    'SELECT `we;ird` FROM t',
    'SELECT 1 - -1',
    'SELECT a FROM t WHERE b = ?',
    'SELECT t.a, u.b FROM t JOIN u ON u.id = t.id LEFT JOIN v ON v.id = u.id',
    'SELECT b, count(*), GROUP_CONCAT(c ORDER BY c SEPARATOR \',\') FROM t GROUP BY b HAVING count(*) > 1',
    'SELECT a, ROW_NUMBER() OVER (PARTITION BY b ORDER BY a), LAG(a, 1) OVER (ORDER BY a) FROM t',
    'WITH x AS (SELECT a FROM t) SELECT * FROM x',
    "SELECT CASE WHEN a > 1 THEN 'big' ELSE 'small' END, CAST(a AS CHAR), IFNULL(a, 0), COALESCE(a, b) FROM t",
    "SELECT a->'$.x', a->>'$.y', JSON_EXTRACT(a, '$.z'), DATE_FORMAT(d, '%Y'), NOW(), CURRENT_TIMESTAMP FROM t",
    "SELECT * FROM t WHERE a LIKE 'x%' AND b IN (1, 2) AND c BETWEEN 1 AND 2 AND d IS NOT NULL LIMIT 10",
    'SELECT 1;',
  ])('allows %j', async (sql) => {
    expect(await mysql.check(sql)).toBeUndefined();
  });
});

describe('readOnlySql, sqlite (node-sql-parser behind SQLite lexical rules)', () => {
  it.each([
    ["SELECT 1 -#a, load_extension('/tmp/evil.so')\n-1", "'#' is refused"],
    ["SELECT 1 --x\r, load_extension('x')", 'carriage return'],
    ["SELECT [it's], load_extension('x')", 'bracketed'],
    ["SELECT 'a\\', 1", 'backslash'],
    ["SELECT load_extension('/tmp/evil.so')", "function 'load_extension' is not allowed"],
    ["SELECT readfile('/etc/passwd')", "function 'readfile' is not allowed"],
    ["SELECT writefile('/tmp/x', 'y')", "function 'writefile' is not allowed"],
    ["SELECT fts3_tokenizer('simple')", "function 'fts3_tokenizer' is not allowed"],
    ['SELECT a FROM t WHERE a IN (SELECT load_extension(b) FROM u)', "function 'load_extension'"],
    ['SELECT * FROM pragma_table_info(\'t\')', "function 'pragma_table_info'"],
    ['SELECT * FROM pragma_optimize', 'pragma table'],
    ["SELECT data FROM fsdir WHERE path = '/etc/passwd'", "table-valued function 'fsdir'"],
    ["SELECT * FROM ZIPFILE WHERE file = '/tmp/x.zip'", "table-valued function 'zipfile'"],
    ['SELECT * FROM main.PRAGMA_OPTIMIZE WHERE arg = 65538', 'pragma table'],
    ['SELECT * FROM "pragma_optimize"', 'pragma table'],
    ["SELECT * FROM t JOIN pragma_table_info ON arg = 't'", 'pragma table'],
    ['SELECT * FROM t WHERE a IN (SELECT 1 FROM pragma_optimize)', 'pragma table'],
    ["SELECT 1; ATTACH DATABASE '/tmp/x' AS x", 'one statement'],
    ['PRAGMA writable_schema = 1', 'rejects it'],
    ['DELETE FROM t', 'not DELETE'],
    ['WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT * FROM r', 'WITH RECURSIVE'],
    ['SELECT * FROM t FOR UPDATE', 'rejects it'],
    ['', 'empty'],
  ])('refuses %j (%s)', async (sql, why) => {
    expect(await sqlite.check(sql)).toContain(why);
  });

  it.each([
    'SELECT 1',
    'SELECT t.a, u.b FROM t JOIN u ON u.id = t.id -- comment\n WHERE t.a > 1',
    "/* c */ SELECT json_extract(a, '$.x'), strftime('%Y', d), typeof(a), printf('%d', a), iif(a, 1, 2) FROM t",
    'WITH x AS (SELECT a FROM t) SELECT b, count(*), group_concat(a) FROM x GROUP BY b HAVING count(*) > 1',
    "SELECT * FROM json_each('[1,2]')",
    "SELECT 'it''s; DELETE FROM t', \"a\"\"b\" FROM t",
    'SELECT 1 /* an open comment runs to the end; DELETE FROM t',
  ])('allows %j', async (sql) => {
    expect(await sqlite.check(sql)).toBeUndefined();
  });
});

describe('readOnlySql, mysql and sqlite under deep input', () => {
  const fill = (unit: string, pre = 'SELECT ', post = '1') => pre + unit.repeat(Math.floor((MAX_SQL_LENGTH - pre.length - post.length) / unit.length)) + post;
  it.each([['mysql', mysql], ['sqlite', sqlite]] as const)('%s: the recursive parser overflowing is a refusal, and the next call is judged as before', async (_name, g) => {
    expect(await g.check(fill('SELECT '))).toBe('the statement is nested too deeply for the parser');
    for (const sql of [fill('- '), fill('NOT '), fill('CASE WHEN 1 THEN '), fill('1+'), fill('(SELECT ')]) {
      expect(await g.check(sql)).not.toBe('the SQL guard could not judge this statement');
    }
    expect(await g.check('SELECT a FROM t WHERE b = 1')).toBeUndefined();
    expect(await g.check('SELECT 1; DELETE FROM t')).toBe('only one statement is allowed');
  });
});

describe('readOnlySql options', () => {
  it('allowFunctions widens the default list; a qualified name must be allowed as written', async () => {
    expect(await pg.check('SELECT my_fn(1)')).toContain('not on this tool');
    const g = guard({ dialect: 'postgres', allowFunctions: ['my_fn', 'reporting.total', 'pg_sleep'] });
    expect(await g.check('SELECT my_fn(1), reporting.total(2)')).toBeUndefined();
    expect(await g.check('SELECT public.my_fn(1)')).toContain("'public.my_fn'");
    // one quoted name holding a dot is a function named so in search_path, not reporting.total
    expect(await g.check('SELECT "reporting.total"(2)')).toContain("holds a quoted '.'");
    expect(await guard({ dialect: 'mysql', allowFunctions: ['reporting.total'] }).check('SELECT `reporting.total`(2)')).toContain("holds a quoted '.'");
    expect(await g.check('SELECT pg_sleep(0)')).toBeUndefined(); // an explicit allowance is honoured
  });

  it('denyFunctions removes a default, under any qualification or case, and wins over allowFunctions', async () => {
    const g = guard({ dialect: 'postgres', denyFunctions: ['LOWER', 'pg_catalog.upper'], allowFunctions: ['upper'] });
    expect(await g.check('SELECT lower(a) FROM t')).toContain("'lower' is denied");
    expect(await g.check('SELECT pg_catalog.lower(a) FROM t')).toContain("'lower' is denied");
    expect(await g.check('SELECT upper(a) FROM t')).toContain("'upper' is denied");
    expect(await g.check('SELECT length(a) FROM t')).toBeUndefined();
    const m = guard({ dialect: 'mysql', denyFunctions: ['now'], allowFunctions: ['MyUdf'] });
    expect(await m.check('SELECT NOW()')).toContain('denied');
    expect(await m.check('SELECT myudf(1)')).toBeUndefined();
  });

  it('allowRecursive lets WITH RECURSIVE through (and nothing else)', async () => {
    const g = guard({ dialect: 'postgres', allowRecursive: true });
    expect(await g.check('WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT * FROM r')).toBeUndefined();
    expect(await g.check('WITH RECURSIVE r(n) AS (SELECT 1) SELECT pg_sleep(n) FROM r')).toContain('pg_sleep');
  });

  it('names the bad entry of a function list', () => {
    expect(() => guard({ dialect: 'postgres', allowFunctions: ['ok', 'not a name'] })).toThrow(GuardConfigError);
    try {
      guard({ dialect: 'mysql', denyFunctions: ['x;y'] });
    } catch (e) {
      expect(e).toMatchObject({ path: '/readOnlySql/denyFunctions/0' });
    }
  });

  it('reports a bad function name or an unknown dialect as a problem of the tool file, at its path', () => {
    const defaults = loadConfig({ file: 'config/gateway.yaml', env: {} }).config.defaults;
    const load = (readOnlySql: unknown) =>
      loadToolText(
        'sql.json',
        JSON.stringify({ name: 'db.q', description: 'q', sideEffect: 'read', guards: [{ arg: 'sql', readOnlySql }], backends: [{ id: 'b', builtin: 'echo' }] }),
        { dir: '.', env: {}, secrets: new Set(), defaults },
      );
    const bad = load({ dialect: 'postgres', allowFunctions: ['fine', 'drop table'] });
    expect(bad.tools).toEqual([]);
    expect(bad.problems).toMatchObject([{ path: '/guards/0/readOnlySql/allowFunctions/1', message: expect.stringContaining("'drop table' is not a function name") }]);
    const dialect = load({ dialect: 'oracle' });
    expect(dialect.tools).toEqual([]);
    expect(dialect.problems.map((p) => p.path).join(' ')).toContain('/guards/0/readOnlySql');
    expect(load({ dialect: 'sqlite', denyFunctions: ['random'] }).problems).toEqual([]);
    expect(load(true).tools).toHaveLength(1);
  });

  it('keeps every dangerous family off the default lists', () => {
    for (const [dialect, names] of Object.entries(DEFAULT_FUNCTIONS)) {
      expect([...names].filter((n) => dangerReason(n) !== undefined), dialect).toEqual([]);
    }
  });
});
