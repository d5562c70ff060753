// Static checks of deploy/k8s/ (no cluster here): the manifests must agree with each other, with
// the Dockerfile (port, working directory) and with config/gateway.yaml (key variables).
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { loadConfig } from '../../src/config/load.js';
import { loadToolText } from '../../src/tools/loader.js';

type Json = Record<string, unknown>;
const isRecord = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const rec = (v: unknown): Json => (isRecord(v) ? v : {});
const arr = (v: unknown): Json[] => (Array.isArray(v) ? v.filter(isRecord) : []);

const docs = ['deploy/k8s/gateway.yaml', 'deploy/k8s/redis.yaml'].flatMap((f) => parseAllDocuments(readFileSync(f, 'utf8')).map((d) => rec(d.toJS())));
const find = (kind: string, name: string): Json => {
  const d = docs.find((x) => x['kind'] === kind && rec(x['metadata'])['name'] === name);
  if (!d) throw new Error(`no ${kind} ${name} in deploy/k8s/`);
  return d;
};

const dockerfile = readFileSync('Dockerfile', 'utf8');
const exposed = Number(/^EXPOSE\s+(\d+)/m.exec(dockerfile)?.[1]);
const workdir = [...dockerfile.matchAll(/^WORKDIR\s+(\S+)/gm)].at(-1)?.[1] ?? '';
const config = rec(parseYaml(readFileSync('config/gateway.yaml', 'utf8')));
const keyVars = arr(rec(config['auth'])['keys']).flatMap((k) => [...String(k['key']).matchAll(/\$\{env:(\w+)\}/g)].map((m) => m[1] ?? ''));

const deployment = find('Deployment', 'toolgate');
const pod = rec(rec(deployment['spec'])['template']);
const podSpec = rec(pod['spec']);
const container = arr(podSpec['containers'])[0] ?? {};
const env = new Map(arr(container['env']).map((e) => [String(e['name']), e]));
const portNamed = (name: unknown): number | undefined => {
  const p = arr(container['ports']).find((x) => x['name'] === name || x['containerPort'] === name);
  return typeof p?.['containerPort'] === 'number' ? p['containerPort'] : undefined;
};

describe('deploy/k8s', () => {
  it('the gateway Deployment runs two or more replicas whose labels its selector and the Service select', () => {
    const spec = rec(deployment['spec']);
    expect(Number(spec['replicas'])).toBeGreaterThanOrEqual(2);
    const labels = rec(rec(pod['metadata'])['labels']);
    for (const selector of [rec(rec(spec['selector'])['matchLabels']), rec(rec(find('Service', 'toolgate')['spec'])['selector'])]) {
      expect(Object.keys(selector).length).toBeGreaterThan(0);
      for (const [k, v] of Object.entries(selector)) expect(labels[k], k).toBe(v);
    }
  });

  it('the gateway Service has no session affinity: /mcp sessions are shared through Redis, any pod serves them', () => {
    const spec = rec(find('Service', 'toolgate')['spec']);
    expect(spec['sessionAffinity'] ?? 'None').toBe('None');
    expect(spec['sessionAffinityConfig']).toBeUndefined();
    expect(String(env.get('REDIS_URL')?.['value'] ?? '')).toMatch(/^rediss?:\/\//); // what sharing them needs
  });

  it("the container port is the Dockerfile's EXPOSE, and the Service targets it", () => {
    expect(portNamed('http')).toBe(exposed);
    expect(env.get('PORT')?.['value']).toBe(String(exposed));
    const svcPort = arr(rec(find('Service', 'toolgate')['spec'])['ports'])[0] ?? {};
    expect(portNamed(svcPort['targetPort'])).toBe(exposed);
  });

  it('readiness probes /readyz and liveness /healthz on that port; the grace period covers preStop and the drain', () => {
    const probe = (name: string) => rec(rec(container[name])['httpGet']);
    expect(probe('readinessProbe')['path']).toBe('/readyz');
    expect(probe('livenessProbe')['path']).toBe('/healthz');
    for (const name of ['readinessProbe', 'livenessProbe']) expect(portNamed(probe(name)['port']), name).toBe(exposed);
    const preStop = rec(rec(rec(container['lifecycle'])['preStop'])['exec'])['command'];
    const sleep = Array.isArray(preStop) && preStop[0] === 'sleep' ? Number(preStop[1]) : 0;
    // server.ts drains for server.drainTimeoutMs (10 s by default), then a 5 s force-exit margin.
    expect(Number(podSpec['terminationGracePeriodSeconds'])).toBeGreaterThanOrEqual(sleep + 15);
  });

  it('REDIS_URL names the Redis Service and its port; that Service selects the Redis pods', () => {
    const url = new URL(String(env.get('REDIS_URL')?.['value']));
    const svc = find('Service', url.hostname);
    expect(arr(rec(svc['spec'])['ports']).some((p) => p['port'] === Number(url.port || 6379))).toBe(true);
    const redis = find('StatefulSet', url.hostname);
    const labels = rec(rec(rec(rec(redis['spec'])['template'])['metadata'])['labels']);
    for (const [k, v] of Object.entries(rec(rec(svc['spec'])['selector']))) expect(labels[k]).toBe(v);
    const image = String(arr(rec(rec(rec(redis['spec'])['template'])['spec'])['containers'])[0]?.['image']);
    expect(image).toMatch(/^redis:7/);
  });

  it("API keys come from a Secret, never inline: every key variable the config reads", () => {
    expect(keyVars.length).toBeGreaterThan(0);
    for (const name of keyVars) {
      const e = env.get(name);
      expect(e?.['value'], name).toBeUndefined();
      expect(rec(rec(e?.['valueFrom'])['secretKeyRef'])['key'], name).toBe(name);
    }
  });

  it('tools.d comes from the ConfigMap (read-only, where the image keeps it), each entry a valid tool file; data/ is writable', () => {
    const mounts = new Map(arr(container['volumeMounts']).map((m) => [String(m['mountPath']), m]));
    const volumes = new Map(arr(podSpec['volumes']).map((v) => [String(v['name']), v]));
    const tools = mounts.get(`${workdir}/tools.d`);
    expect(tools?.['readOnly']).toBe(true);
    const cmName = rec(volumes.get(String(tools?.['name']))?.['configMap'])['name'];
    const data = rec(find('ConfigMap', String(cmName))['data']);
    const defaults = loadConfig({ file: 'config/gateway.yaml', env: {} }).config.defaults;
    for (const [file, text] of Object.entries(data)) {
      const out = loadToolText(file, String(text), { dir: 'tools.d', env: {}, secrets: new Set(), defaults });
      expect(out.problems, file).toEqual([]);
      expect(out.tools.length, file).toBe(1);
    }
    const dataMount = mounts.get(`${workdir}/data`);
    expect(dataMount).toBeDefined();
    expect(dataMount?.['readOnly']).not.toBe(true);
  });
});
