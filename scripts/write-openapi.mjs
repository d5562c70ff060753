// Writes openapi/openapi.json and openapi/tool.schema.json from the built code (npm run openapi).
import { mkdirSync, writeFileSync } from 'node:fs';
import { openApiDocument, toolFileJsonSchema, serialize } from '../dist/openapi.js';

mkdirSync('openapi', { recursive: true });
writeFileSync('openapi/openapi.json', serialize(await openApiDocument()));
writeFileSync('openapi/tool.schema.json', serialize(toolFileJsonSchema()));
console.log('wrote openapi/openapi.json and openapi/tool.schema.json');
