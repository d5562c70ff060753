/**
 * For speed and memory: parts of a document that no tool reads are left out before it is
 * dereferenced (the parser clones the whole document, then walks it): webhooks (GitHub's
 * `x-webhooks`, 0.6 MB), the `examples` of request and response media types (tools keep the
 * schemas' and parameters' examples only), and `components/examples` when every reference to it
 * was in those media types (GitHub: 1.4 MB of its 6.8 MB of compact JSON). A part that a `$ref`
 * elsewhere may point into is kept. Works on the freshly parsed document, in place.
 */
type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => v !== null && typeof v === 'object' && !Array.isArray(v);

const EXAMPLES_REF = '#/components/examples/';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

export function pruneUnread(doc: Rec, text: string): void {
  let dropped = 0; // references into components/examples removed with what is left out
  for (const key of ['webhooks', 'x-webhooks']) {
    if (!(key in doc) || text.includes(`#/${key}`)) continue;
    dropped += refsInto(doc[key], new Set());
    delete doc[key];
  }
  const media = (content: unknown) => {
    if (!isRec(content)) return;
    for (const m of Object.values(content)) {
      if (!isRec(m) || !isRec(m['examples'])) continue;
      dropped += refsInto(m['examples'], new Set());
      delete m['examples'];
    }
  };
  const responses = (rs: unknown) => {
    if (isRec(rs)) for (const r of Object.values(rs)) if (isRec(r)) media(r['content']);
  };
  const bodies = (bs: unknown) => {
    if (isRec(bs)) for (const b of Object.values(bs)) if (isRec(b)) media(b['content']);
  };
  if (isRec(doc['paths'])) {
    for (const item of Object.values(doc['paths'])) {
      if (!isRec(item)) continue;
      for (const method of METHODS) {
        const op = item[method];
        if (!isRec(op)) continue;
        responses(op['responses']);
        if (isRec(op['requestBody'])) media(op['requestBody']['content']);
      }
    }
  }
  const components = doc['components'];
  if (!isRec(components)) return;
  responses(components['responses']);
  bodies(components['requestBodies']);
  // Every mention of the prefix in the text was one of the references removed (an escaped `\/` could hide one: then keep it).
  if (isRec(components['examples']) && !text.includes('\\/') && count(text, EXAMPLES_REF) === dropped) delete components['examples'];
}

/** `$ref`s to components/examples in a value (an example's value may hold some too). */
function refsInto(value: unknown, seen: Set<object>): number {
  if (value === null || typeof value !== 'object' || seen.has(value)) return 0;
  seen.add(value);
  let n = isRec(value) && typeof value['$ref'] === 'string' && value['$ref'].startsWith(EXAMPLES_REF) ? 1 : 0;
  for (const v of Object.values(value)) n += refsInto(v, seen);
  return n;
}

function count(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) n++;
  return n;
}
