// The cost of one readOnlySql check (parse + walk), per dialect: a typical query, a small one, and
// the worst text found under the length limit. Run after `npm run build`; prints markdown.
import { compileReadOnlySql, MAX_SQL_LENGTH } from '../dist/guards/sql/index.js';

const TYPICAL = `SELECT c.id, c.name, count(o.id) AS orders, sum(o.total) AS revenue
FROM customers c JOIN orders o ON o.customer_id = c.id
WHERE o.created_at >= '2024-01-01' AND c.country IN ('FR', 'DE', 'NL') AND lower(c.name) LIKE 'a%'
GROUP BY c.id, c.name HAVING count(o.id) > 2 ORDER BY revenue DESC LIMIT 20`;
const fill = (unit, pre = 'SELECT ', post = '1') => pre + unit.repeat(Math.floor((MAX_SQL_LENGTH - pre.length - post.length) / unit.length)) + post;
const WORST = { postgres: fill('1+'), mysql: fill('1,'), sqlite: fill('1,') };

async function perCall(guard, sql, calls) {
  for (let i = 0; i < Math.min(100, calls); i++) await guard.check(sql);
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) await guard.check(sql);
  return Number(process.hrtime.bigint() - started) / 1000 / calls;
}

const rows = [];
for (const dialect of ['postgres', 'mysql', 'sqlite']) {
  const guard = compileReadOnlySql({ dialect });
  if ((await guard.check(TYPICAL)) !== undefined) throw new Error(`${dialect} refuses the typical query`);
  rows.push(`| ${dialect} | ${(await perCall(guard, 'SELECT 1', 1000)).toFixed(0)} | ${(await perCall(guard, TYPICAL, 1000)).toFixed(0)} | ${((await perCall(guard, WORST[dialect], 20)) / 1000).toFixed(1)} ms |`);
}
console.log(`One check = parse + walk of the whole tree, 1,000 checks after 100 warm-up (worst case: 20 checks of ${MAX_SQL_LENGTH}-character text).

| dialect | \`SELECT 1\` µs | typical query (${TYPICAL.length} chars, join + group by) µs | worst case at the length limit |
| --- | ---: | ---: | ---: |
${rows.join('\n')}`);
