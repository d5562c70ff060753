import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PGlite } from '@electric-sql/pglite';
import { compileReadOnlySql } from '../../src/guards/sql/index.js';
import { startGateway, type TestGateway } from '../helpers/app.js';
import { Upstream, json } from '../helpers/upstream.js';
import { PG_LEXICAL_BYPASSES, PG_READS, PG_SCHEMA } from '../helpers/sql-cases.js';

/**
 * The guard against a real PostgreSQL (PGlite: the server compiled to WASM, in process). Every
 * refused string is first shown to do harm when PostgreSQL runs it, so no case passes vacuously;
 * every allowed read runs and changes nothing.
 */
describe('readOnlySql on a real PostgreSQL', () => {
  let db: PGlite;
  const guard = compileReadOnlySql(true);
  const one = async <T>(sql: string): Promise<T> => (await db.query<{ v: T }>(sql)).rows[0]!.v;
  /** Everything a statement could have changed, as one comparable value. */
  const fingerprint = async () => ({
    rows: await one<string>("SELECT md5(string_agg(t::text, ',' ORDER BY id)) AS v FROM t"),
    count: await one<number>('SELECT count(*)::int AS v FROM t'),
    locked: await one<number>("SELECT count(*)::int AS v FROM t WHERE xmax::text <> '0'"),
    tables: await one<number>("SELECT count(*)::int AS v FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace"),
    sequence: await one<boolean>('SELECT is_called AS v FROM s'),
    largeObjects: await one<number>('SELECT count(*)::int AS v FROM pg_largeobject_metadata'),
    advisoryLocks: await one<number>("SELECT count(*)::int AS v FROM pg_locks WHERE locktype = 'advisory'"),
    applicationName: await one<string>("SELECT current_setting('application_name') AS v"),
  });

  beforeAll(async () => {
    db = await PGlite.create();
  }, 60_000);
  afterAll(async () => {
    await db.close();
  });
  beforeEach(async () => {
    await db.exec(`
      SELECT pg_advisory_unlock_all();
      SELECT lo_unlink(oid) FROM pg_largeobject_metadata;
      RESET application_name;
      DROP TABLE IF EXISTS t, u, v, copy CASCADE;
      DROP SEQUENCE IF EXISTS s;
      ${PG_SCHEMA}`);
  });

  type Harm = (before: Awaited<ReturnType<typeof fingerprint>>, after: Awaited<ReturnType<typeof fingerprint>>) => boolean;
  const deleted: Harm = (_b, a) => a.count === 0;
  const cases: [string, Harm][] = [
    ...PG_LEXICAL_BYPASSES.map((sql): [string, Harm] => [sql, deleted]),
    ['WITH d AS (DELETE FROM t RETURNING *) SELECT count(*) FROM d', deleted],
    ["WITH i AS (INSERT INTO t (id) VALUES (99) RETURNING *) SELECT * FROM i", (b, a) => a.count === b.count + 1],
    ["WITH w AS (UPDATE t SET c = 'pwned' RETURNING *) SELECT * FROM w", (b, a) => a.rows !== b.rows],
    ['SELECT * INTO copy FROM t', (b, a) => a.tables === b.tables + 1],
    ['SELECT * FROM t FOR KEY SHARE', (_b, a) => a.locked > 0],
    ['SELECT * FROM t FOR UPDATE', (_b, a) => a.locked > 0],
    ["SELECT nextval('s')", (_b, a) => a.sequence],
    ["SELECT query_to_xml('SELECT nextval(''s'')', true, false, '')", (_b, a) => a.sequence],
    ["SELECT set_config('application_name', 'pwned', false)", (_b, a) => a.applicationName === 'pwned'],
    ["SELECT lo_from_bytea(0, 'x')", (_b, a) => a.largeObjects === 1],
    ["SELECT lo_import('/pglite/data/PG_VERSION')", (_b, a) => a.largeObjects === 1],
    ['SELECT pg_advisory_lock(42)', (_b, a) => a.advisoryLocks === 1],
    // attribute notation: PostgreSQL runs `(x).f` and `alias.f` as f(x), with no call in the tree
    ['SELECT (42).pg_advisory_lock', (_b, a) => a.advisoryLocks === 1],
    ['SELECT g.pg_advisory_lock FROM generate_series(7, 7) g', (_b, a) => a.advisoryLocks === 1],
    ["SELECT ('s').nextval", (_b, a) => a.sequence],
    ["SELECT ('/pglite/data/PG_VERSION').lo_import", (_b, a) => a.largeObjects === 1],
  ];

  it.each(cases)('refuses %j, which PostgreSQL runs to harm', async (sql, harmed) => {
    expect(await guard.check(sql)).toEqual(expect.any(String));
    const before = await fingerprint();
    await db.exec(sql);
    expect(harmed(before, await fingerprint())).toBe(true);
  });

  it('refuses reading and writing server files, which PostgreSQL does', async () => {
    await db.exec("SELECT lo_from_bytea(4242, 'exfiltrated')");
    for (const sql of ["SELECT lo_export(4242, '/pglite/data/pwned.txt')", "SELECT pg_read_file('pwned.txt')", "SELECT * FROM pg_ls_dir('.')"]) {
      expect(await guard.check(sql), sql).toContain('reads or writes files');
    }
    await db.exec("SELECT lo_export(4242, '/pglite/data/pwned.txt')");
    expect(await one<string>("SELECT pg_read_file('pwned.txt') AS v")).toBe('exfiltrated');
  });

  it('refuses pg_sleep, which holds the connection as long as asked', async () => {
    expect(await guard.check('SELECT pg_sleep(0.3)')).toContain('makes the query wait');
    const started = performance.now();
    await db.exec('SELECT pg_sleep(0.3)');
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('refuses a volatile function in attribute notation, which PostgreSQL calls: sleeping, reading files, running SQL from a string', async () => {
    for (const sql of ['SELECT (0.3).pg_sleep', 'SELECT x.pg_sleep FROM unnest(ARRAY[0.3]) x']) {
      expect(await guard.check(sql), sql).toContain("calls the function 'pg_sleep' (PostgreSQL's attribute notation)");
      const started = performance.now();
      await db.exec(sql);
      expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    }
    expect(await guard.check("SELECT ('PG_VERSION').pg_read_file")).toContain('reads or writes files');
    expect(await one<string>("SELECT ('PG_VERSION').pg_read_file AS v")).toMatch(/^\d+\n$/);
    const query = "SELECT ('SELECT to_tsvector(name) FROM t').ts_stat AS v";
    expect(await guard.check(query)).toContain('runs other SQL');
    expect((await db.query(query)).rows).toHaveLength(5);
  });

  it('refuses WITH RECURSIVE, which runs as long as its text lets it', async () => {
    const sql = 'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*)::int AS v FROM (SELECT * FROM r LIMIT 100000) x';
    expect(await guard.check(sql)).toContain('WITH RECURSIVE');
    expect(await one<number>(sql)).toBe(100000);
  });

  it.each(PG_READS.map(([sql, params]): [string, unknown[] | undefined] => [sql, params]))('allows %j, which PostgreSQL runs without changing anything', async (sql, params) => {
    expect(await guard.check(sql)).toBeUndefined();
    const before = await fingerprint();
    await (params ? db.query(sql, params) : db.exec(sql));
    expect(await fingerprint()).toEqual(before);
  });

  describe('through a gateway to an upstream that runs the SQL', () => {
    let up: Upstream;
    let gw: TestGateway;
    beforeAll(async () => {
      up = await new Upstream().start();
      up.on(async (_req, res, body) => {
        try {
          const results = await db.exec((JSON.parse(body) as { sql: string }).sql);
          json(res, 200, { rows: results.at(-1)?.rows ?? [] });
        } catch (e) {
          json(res, 400, { error: (e as Error).message });
        }
      });
      gw = await startGateway({
        tools: {
          'sql.yaml': {
            name: 'db.query',
            description: 'Runs a read-only query on PostgreSQL',
            sideEffect: 'read',
            inputSchema: { type: 'object', required: ['sql'], properties: { sql: { type: 'string' } } },
            guards: [{ arg: 'sql', readOnlySql: { dialect: 'postgres' } }],
            backends: [{ id: 'pg', http: { method: 'POST', url: `${up.url}/sql`, body: '{{arguments}}' } }],
          },
        },
      });
    });
    afterAll(async () => {
      await gw.close();
      await up.close();
    });

    it('answers every bypass 403 FORBIDDEN, never reaches the database, and a read still runs', async () => {
      for (const sql of PG_LEXICAL_BYPASSES) {
        const res = await gw.call('db.query', { sql });
        expect(res.statusCode, sql).toBe(403);
        expect(res.json().error).toMatchObject({ code: 'FORBIDDEN', details: [{ path: '/sql', message: 'only one statement is allowed' }] });
        expect(res.json().error.modelMessage).toContain('read-only SELECT');
      }
      expect(up.seen).toHaveLength(0);
      expect(await one<number>('SELECT count(*)::int AS v FROM t')).toBe(5);
      const read = await gw.call('db.query', { sql: 'SELECT id FROM t ORDER BY id' });
      expect(read.statusCode).toBe(200);
      expect(JSON.stringify(read.json())).toContain('"rows":[{"id":1},{"id":2},{"id":3},{"id":4},{"id":5}]');
      expect(up.seen).toHaveLength(1);
    });
  });
});
