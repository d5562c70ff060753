import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

/**
 * deploy/prometheus/alerts.yml and deploy/grafana/toolgate.json: promtool validates and unit-tests
 * the rules, and every expression (dashboard and rules) may name only the metrics and labels that
 * src/metrics/definitions.ts defines, so neither can drift from the code.
 */

const ALERTS = 'deploy/prometheus/alerts.yml';
const ALERT_TESTS = 'deploy/prometheus/alerts.test.yml';
const DASHBOARD = 'deploy/grafana/toolgate.json';

function promtool(...args: string[]) {
  const r = spawnSync('promtool', args, { encoding: 'utf8', timeout: 30000 });
  if (r.error) throw new Error(`promtool did not run (${r.error.message}): install Debian's prometheus package, as .ci/run does`);
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

type Kind = 'Counter' | 'Gauge' | 'Histogram';
/** Series name → labels it may carry, read from the text of definitions.ts. */
function definedSeries(): Map<string, Set<string>> {
  const parts = readFileSync('src/metrics/definitions.ts', 'utf8').split(/new (?:Bound)?(Counter|Gauge|Histogram)\(/);
  const series = new Map<string, Set<string>>();
  for (let i = 1; i < parts.length; i += 2) {
    const kind = parts[i] as Kind;
    const body = parts[i + 1] ?? '';
    const name = /name: '([a-z_:][a-z0-9_:]*)'/.exec(body)?.[1];
    if (!name) throw new Error(`a ${kind} in definitions.ts without a literal name`);
    const list = /labelNames: \[([^\]]*)\]/.exec(body)?.[1] ?? '';
    const labels = [...list.matchAll(/'([^']+)'/g)].map((m) => m[1] as string);
    if (kind === 'Histogram') {
      series.set(`${name}_bucket`, new Set([...labels, 'le']));
      series.set(`${name}_sum`, new Set(labels));
      series.set(`${name}_count`, new Set(labels));
    } else series.set(name, new Set(labels));
  }
  return series;
}

const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'inf', 'nan']);
/** Labels Prometheus adds to every scraped series. */
const TARGET_LABELS = new Set(['instance', 'job']);

interface Use {
  metric: string;
  labels: string[];
}
/** The series a PromQL expression reads (with the labels it matches on) and the labels it groups by. */
function parsePromql(expr: string): { uses: Use[]; grouping: string[] } {
  let e = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""').replace(/\$\{?\w+\}?/g, ' ');
  const uses: Use[] = [];
  e = e.replace(/([a-zA-Z_:][a-zA-Z0-9_:]*)?\s*\{([^}]*)\}/g, (_m, name: string | undefined, body: string) => {
    const labels = [...body.matchAll(/([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)/g)].map((m) => m[1] as string);
    uses.push({ metric: name ?? '', labels });
    return ' ';
  });
  e = e.replace(/\[[^\]]*\]/g, ' ');
  const grouping: string[] = [];
  e = e.replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g, (_m, _k: string, list: string) => {
    grouping.push(...list.split(',').map((s) => s.trim()).filter((s) => s !== ''));
    return ' ';
  });
  for (const m of e.matchAll(/(?<![\w.:])([a-zA-Z_:][a-zA-Z0-9_:]*)(?![\w:])(?!\s*\()/g)) {
    const word = m[1] as string;
    if (!KEYWORDS.has(word.toLowerCase())) uses.push({ metric: word, labels: [] });
  }
  return { uses, grouping };
}

/** Every metric and label an expression names must be defined; grouping labels must exist on one of its metrics. */
function driftProblems(where: string, expr: string, defined: Map<string, Set<string>>): string[] {
  const { uses, grouping } = parsePromql(expr);
  const out: string[] = [];
  if (uses.length === 0) out.push(`${where}: no metric in ${expr}`);
  const known = new Set(TARGET_LABELS);
  for (const u of uses) {
    const labels = defined.get(u.metric);
    if (!labels) {
      out.push(`${where}: ${u.metric || '(no name)'} is not defined in src/metrics/definitions.ts`);
      continue;
    }
    labels.forEach((l) => known.add(l));
    for (const l of u.labels) if (!labels.has(l) && !TARGET_LABELS.has(l)) out.push(`${where}: ${u.metric} has no label ${l}`);
  }
  for (const l of grouping) if (!known.has(l)) out.push(`${where}: groups by ${l}, a label none of its metrics has`);
  return out;
}

interface Target {
  expr?: string;
  datasource?: { uid?: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type?: string; uid?: string };
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: Target[];
}
interface Dashboard {
  schemaVersion: number;
  uid: string;
  __inputs: { name: string; type: string; pluginId: string }[];
  panels: Panel[];
  templating: { list: { name: string; query: { query: string } | string; datasource?: { uid?: string } }[] };
}
interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

const defined = definedSeries();
const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard;
const rules = (parse(readFileSync(ALERTS, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);
const panelExprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p, expr: t.expr ?? '' })));

describe('alert rules (promtool)', () => {
  it('promtool check rules accepts deploy/prometheus/alerts.yml', () => {
    const r = promtool('check', 'rules', ALERTS);
    expect(r.output).toMatch(/SUCCESS: \d+ rules found/);
    expect(r.status, r.output).toBe(0);
  });

  it('promtool test rules: each alert fires on the series that should fire it, and only those', () => {
    const r = promtool('test', 'rules', ALERT_TESTS);
    expect(r.status, r.output).toBe(0);
    expect(r.output).toContain('SUCCESS');
  });

  it('the rules asked for exist, each tested with a firing case, with a severity and a summary', () => {
    const names = rules.map((r) => r.alert);
    expect(names).toEqual(
      expect.arrayContaining(['ToolgateBreakerOpen', 'ToolgateToolErrorRatioHigh', 'ToolgateConfirmationsPilingUp', 'ToolgateReloadFailing', 'ToolgateMcpServerRestartLoop']),
    );
    const tests = parse(readFileSync(ALERT_TESTS, 'utf8')) as { tests: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[] };
    const firing = new Set(tests.tests.flatMap((t) => t.alert_rule_test.filter((a) => a.exp_alerts.length > 0).map((a) => a.alertname)));
    const silent = new Set(tests.tests.flatMap((t) => t.alert_rule_test.filter((a) => a.exp_alerts.length === 0).map((a) => a.alertname)));
    for (const r of rules) {
      expect(r.labels?.['severity'], r.alert).toMatch(/^(warning|critical)$/);
      expect(r.annotations?.['summary'], r.alert).toBeTruthy();
    }
    for (const n of names) expect(firing.has(n), `${n} fires in a test`).toBe(true);
    for (const n of names) expect(silent.has(n), `${n} stays silent in a test`).toBe(true);
    expect(rules.find((r) => r.alert === 'ToolgateBreakerOpen')).toMatchObject({ expr: expect.stringMatching(/toolgate_breaker_state\) == 2$/), for: '5m' });
  });

  it('every rule names only metrics and labels that src/metrics/definitions.ts defines', () => {
    expect(rules.flatMap((r) => driftProblems(r.alert, r.expr, defined))).toEqual([]);
  });
});

describe('Grafana dashboard', () => {
  it('reads definitions.ts as expected (the drift check below relies on it)', () => {
    expect(defined.get('toolgate_tool_calls_total')).toEqual(new Set(['tool', 'backend', 'outcome']));
    expect(defined.get('toolgate_tool_call_duration_seconds_bucket')).toEqual(new Set(['tool', 'le']));
    expect(defined.get('toolgate_confirmations_pending')).toEqual(new Set());
    expect(driftProblems('t', 'sum by (tool) (rate(toolgate_tool_callz_total{outcome="x"}[5m]))', defined)).toEqual([
      't: toolgate_tool_callz_total is not defined in src/metrics/definitions.ts',
      't: groups by tool, a label none of its metrics has',
    ]);
    expect(driftProblems('t', 'toolgate_breaker_state{colour="red"} == 2', defined)).toEqual(['t: toolgate_breaker_state has no label colour']);
  });

  it('is an importable dashboard: schema 39, a DS_PROMETHEUS input used by every panel and query, no overlap', () => {
    expect(dashboard.schemaVersion).toBe(39);
    expect(dashboard.uid).toBe('toolgate');
    expect(dashboard.__inputs).toEqual([expect.objectContaining({ name: 'DS_PROMETHEUS', type: 'datasource', pluginId: 'prometheus' })]);
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const cells = new Map<string, string>();
    for (const p of dashboard.panels) {
      if (p.type !== 'row') {
        expect(p.datasource?.uid, p.title).toBe('${DS_PROMETHEUS}');
        expect(p.targets?.length, p.title).toBeGreaterThan(0);
        for (const t of p.targets ?? []) expect(t.datasource?.uid, p.title).toBe('${DS_PROMETHEUS}');
      }
      const { x, y, w, h } = p.gridPos;
      expect(x + w, p.title).toBeLessThanOrEqual(24);
      for (let i = x; i < x + w; i++) {
        for (let j = y; j < y + h; j++) {
          expect(cells.get(`${i},${j}`), `${p.title} overlaps`).toBeUndefined();
          cells.set(`${i},${j}`, p.title);
        }
      }
    }
  });

  it('has the panels asked for', () => {
    const has = (re: RegExp) => panelExprs.some((e) => re.test(e.expr));
    expect(has(/sum by \(outcome\) \(rate\(toolgate_tool_calls_total/)).toBe(true);
    expect(has(/histogram_quantile\(0\.5, sum by \(tool, le\) \(rate\(toolgate_tool_call_duration_seconds_bucket/)).toBe(true);
    expect(has(/histogram_quantile\(0\.99, sum by \(tool, le\) \(rate\(toolgate_tool_call_duration_seconds_bucket/)).toBe(true);
    expect(has(/toolgate_breaker_state/)).toBe(true);
    expect(has(/toolgate_confirmations_pending/)).toBe(true);
    expect(has(/toolgate_reloads_total\{result="error"\}/)).toBe(true);
    expect(has(/by \(server, state\) \(toolgate_mcp_connections\)/)).toBe(true);
    const breakers = dashboard.panels.find((p) => p.title === 'Breaker states') as Panel & { fieldConfig: { defaults: { mappings: { options: Record<string, { text: string }> }[] } } };
    const texts = Object.fromEntries(Object.entries(breakers.fieldConfig.defaults.mappings[0]?.options ?? {}).map(([k, v]) => [k, v.text]));
    expect(texts).toEqual({ '0': 'closed', '1': 'half-open', '2': 'open', '3': 'disabled' });
  });

  it('every expression (panels and variables) names only metrics and labels that src/metrics/definitions.ts defines', () => {
    const problems = panelExprs.flatMap(({ panel, expr }) => driftProblems(panel.title, expr, defined));
    for (const v of dashboard.templating.list) {
      const q = typeof v.query === 'string' ? v.query : v.query.query;
      const m = /^label_values\(\s*([a-zA-Z_:][\w:]*)\s*,\s*(\w+)\s*\)$/.exec(q);
      expect(m, `variable ${v.name}: ${q}`).not.toBeNull();
      const labels = defined.get(m?.[1] ?? '');
      if (!labels?.has(m?.[2] ?? '')) problems.push(`variable ${v.name}: ${q} names an undefined metric or label`);
    }
    expect(problems).toEqual([]);
  });
});
