import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { openApiDocument, serialize, toolFileJsonSchema } from '../../src/openapi.js';
import { createAjv } from '../../src/util/ajv.js';
import { parse } from 'yaml';

describe('published documents', () => {
  it('openapi/openapi.json is the document the code generates (run `npm run openapi` when it is stale)', async () => {
    expect(readFileSync('openapi/openapi.json', 'utf8')).toBe(serialize(await openApiDocument()));
  });

  it('openapi/tool.schema.json is the schema the loader validates with', () => {
    expect(readFileSync('openapi/tool.schema.json', 'utf8')).toBe(serialize(toolFileJsonSchema()));
  });

  it('the published tool schema accepts the SPEC example and rejects an unknown key', () => {
    const validate = createAjv().compile(JSON.parse(readFileSync('openapi/tool.schema.json', 'utf8')) as object);
    const example = parse(readFileSync('test/fixtures/tools.d/good/weather.yaml', 'utf8')) as Record<string, unknown>;
    expect(validate(example)).toBe(true);
    expect(validate({ ...example, colour: 'blue' })).toBe(false);
  });

  it('documents every error status of the call route with the shared error body', async () => {
    const doc = (await openApiDocument()) as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
    const responses = doc.paths['/v1/tools/{name}/call']!['post']!.responses;
    expect(Object.keys(responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403', '404', '413', '422', '502', '503', '504']));
  });
});
