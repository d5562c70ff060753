import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileAuditSink } from '../../src/audit/file-sink.js';
import { auditRecord } from '../../src/audit/record.js';
import { redact, parseRedactPaths, scrubSecrets } from '../../src/audit/redact.js';

describe('audit file sink', () => {
  it('rotates by size without losing or splitting a line', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'toolgate-audit-')), 'audit.jsonl');
    const sink = new FileAuditSink(path, { maxBytes: 4096, keep: 50, flushIntervalMs: 1 });
    for (let i = 0; i < 1000; i++) {
      sink.write(auditRecord({ event: 'call', tool: 't', callId: `c${i}`, args: { pad: 'x'.repeat(i % 50) } }));
      if (i % 97 === 0) await sink.flush();
    }
    await sink.close();
    const files = sink.files();
    expect(files.length).toBeGreaterThan(10);
    const lines = files.flatMap((f) => readFileSync(f, 'utf8').split('\n').filter(Boolean));
    const ids = lines.map((l) => (JSON.parse(l) as { callId: string }).callId);
    expect(ids).toEqual(Array.from({ length: 1000 }, (_, i) => `c${i}`));
  });

  it('keeps every record whole and in order across buffer chunks: multi-byte text, a record larger than a chunk', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'toolgate-audit-')), 'audit.jsonl');
    const sink = new FileAuditSink(path, { flushIntervalMs: 60_000 });
    const texts = ['天气 ☀︎ ok', 'é'.repeat(40_000), '😀'.repeat(30_000), 'plain', 'x'.repeat(200_000)];
    for (let i = 0; i < 600; i++) sink.write(auditRecord({ event: 'call', tool: 't', callId: `c${i}`, args: { text: texts[i % texts.length] } }));
    await sink.close(); // one batch: everything buffered since the start
    const lines = readFileSync(path, 'utf8').split('\n');
    expect(lines.pop()).toBe('');
    const records = lines.map((l) => JSON.parse(l) as { callId: string; args: { text: string } });
    expect(records.map((r) => r.callId)).toEqual(Array.from({ length: 600 }, (_, i) => `c${i}`));
    expect(records.every((r, i) => r.args.text === texts[i % texts.length])).toBe(true);
  });

  it('durable() resolves once the record is in the file', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'toolgate-audit-')), 'audit.jsonl');
    const sink = new FileAuditSink(path, { flushIntervalMs: 60_000 });
    await sink.durable(auditRecord({ event: 'confirmation', outcome: 'approved', confirmationId: 'cf_1' }));
    expect(readFileSync(path, 'utf8')).toContain('cf_1');
    await sink.close();
  });
});

describe('redaction', () => {
  it('masks named paths, wildcards inside arrays, and secret values anywhere', () => {
    const paths = parseRedactPaths(['apiKey', '*.password', 'auth.token']);
    const out = redact(
      { apiKey: 'k', user: { password: 'p', name: 'n' }, list: [{ password: 'q' }], auth: { token: 't' }, note: 'uses sk-SECRET-1 inline' },
      paths,
      new Set(['sk-SECRET-1']),
    );
    expect(out).toEqual({
      apiKey: '[REDACTED]',
      user: { password: '[REDACTED]', name: 'n' },
      list: [{ password: '[REDACTED]' }],
      auth: { token: '[REDACTED]' },
      note: 'uses [REDACTED] inline',
    });
  });

  it('leaves very short values alone (they are not secrets worth masking text for)', () => {
    expect(scrubSecrets('port 80 and true', new Set(['80', 'true']))).toBe('port 80 and true');
  });
});
