/** SQL cases shared by the unit test of the guard and the test that runs them on PostgreSQL (PGlite). */

/** The bypasses of issue 21: each passed the old regex guard, and PostgreSQL deletes every row of t. */
export const PG_LEXICAL_BYPASSES = [
  "SELECT '--'; DELETE FROM t",
  "SELECT '/*'; DELETE FROM t; SELECT '*/'",
  'SELECT 1 --x\r; DELETE FROM t',
  "SELECT E'\\'', 1; DELETE FROM t",
  'SELECT 1 AS a$x$; DELETE FROM t; --',
];

/** The tables the reads below run on. */
export const PG_SCHEMA = `
  CREATE TABLE t (id int PRIMARY KEY, a int, b int, c text, d int, name text, doc jsonb);
  INSERT INTO t SELECT g, g, g % 2, 'c' || g, g, 'name' || g, jsonb_build_object('a', g, 'b', 'x', 'c', jsonb_build_object('d', g)) FROM generate_series(1, 5) g;
  CREATE TABLE u (id int PRIMARY KEY, a int, b int);
  INSERT INTO u SELECT g, g, g % 2 FROM generate_series(1, 3) g;
  CREATE TABLE v (id int PRIMARY KEY);
  INSERT INTO v VALUES (1), (2);
  CREATE SEQUENCE s;
`;

/** Ordinary reads the guard must let through, with their parameters where they have some. */
export const PG_READS: readonly (readonly [string, unknown[]?])[] = [
  ['SELECT 1'],
  ['select * from t where a = 1;'],
  ["SELECT ';DROP TABLE x' FROM t"],
  ['/* hi */ SELECT a -- trailing\nFROM t'],
  ['/* nested /* comments */ ; DELETE FROM t */ SELECT 1 -- ; DELETE FROM t'],
  ['SELECT t.a, u.b FROM t JOIN u ON u.id = t.id LEFT JOIN v ON v.id = u.id WHERE t.a > 1'],
  ['WITH x AS (SELECT 1) SELECT * FROM x'],
  ['WITH x AS (SELECT a FROM t), y AS MATERIALIZED (SELECT a FROM x) SELECT * FROM y'],
  ['SELECT a, row_number() OVER (PARTITION BY b ORDER BY a), lag(a) OVER w, sum(a) OVER (ORDER BY a ROWS 1 PRECEDING) FROM t WINDOW w AS (ORDER BY a)'],
  ["SELECT $$it's; DELETE FROM t$$ AS s, $tag$ $$ ; $tag$ AS d"],
  ["SELECT E'it\\'s; DELETE FROM t', E'\\n'"],
  ['SELECT a FROM t WHERE b = $1 AND d = $2::int', [1, 3]],
  ["SELECT b, count(*) FILTER (WHERE a > 1), string_agg(c, ',' ORDER BY c) FROM t GROUP BY b HAVING count(*) > 1"],
  ['SELECT * FROM t WHERE a IN (SELECT a FROM u WHERE u.b = t.b) AND EXISTS (SELECT 1 FROM v)'],
  ["SELECT CASE WHEN a > 1 THEN 'big' WHEN a IS NULL THEN 'none' ELSE 'small' END FROM t"],
  ["SELECT a::text, CAST(b AS numeric(10, 2)), 't'::regclass, '1 day'::interval FROM t"],
  ["SELECT * FROM t WHERE name ILIKE '%NAME%' AND name NOT LIKE 'y%' AND name SIMILAR TO 'name[0-9]' AND c LIKE 'c!%' ESCAPE '!' OR a = 1"],
  [`SELECT doc->'a', doc->>'b', doc#>'{c,d}', doc @> '{"a":1}', doc ? 'b', jsonb_path_query_first(doc, '$.c.d') FROM t`],
  ['VALUES (1, 2), (3, 4)'],
  ['SELECT 1 UNION SELECT 2 INTERSECT SELECT 2 EXCEPT SELECT 3'],
  ['TABLE t'],
  ['SELECT DISTINCT ON (b) b, a FROM t ORDER BY b, a DESC NULLS LAST LIMIT 10 OFFSET 1'],
  ['SELECT * FROM t FETCH FIRST 3 ROWS ONLY'],
  ["SELECT substring(c from 2 for 3), extract(year from now()), trim(both 'c' from c), position('1' in c), now() AT TIME ZONE 'UTC' FROM t"],
  ["SELECT date_trunc('day', now()), to_char(now(), 'YYYY'), age(now()), current_date, current_timestamp, coalesce(a, 0), nullif(a, 0), greatest(a, 1) FROM t"],
  ['SELECT pg_catalog.lower(c), upper(c), length(c), round(avg(b), 2) FROM t GROUP BY c'],
  ['SELECT g, json_agg(x) FROM generate_series(1, 3) g, LATERAL (SELECT * FROM t WHERE t.a = g) x GROUP BY g'],
  ['SELECT unnest(ARRAY[1, 2, 3]), array_length(ARRAY[1], 1), cardinality(ARRAY[1])'],
  ['(SELECT 1)'],
  ['SELECT t.name, t.c, public.t.a, (t.doc)->>\'b\', (row(1, 2)).f1, t.row_to_json, (t).id FROM public.t'],
];
