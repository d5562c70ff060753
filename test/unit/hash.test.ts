import { describe, expect, it } from 'vitest';
import { canonicalJson, digest } from '../../src/util/hash.js';
import { nestsDeeperThan } from '../../src/util/depth.js';

/** `{ a: [ { a: [ … 1 … ] } ] }`, `levels` containers deep. */
function nested(levels: number, leaf: unknown = 1): unknown {
  let v = leaf;
  for (let i = 0; i < levels; i++) v = i % 2 ? { a: v } : [v];
  return v;
}

describe('canonicalJson', () => {
  it('sorts keys at every level, drops undefined members and writes JSON.stringify\'s primitives', () => {
    const value = { b: 1, a: undefined, c: [1, undefined, null, { z: 'é"\n', y: undefined, x: -0 }], d: {}, e: [], '10': true, '9': 2.5 };
    expect(canonicalJson(value)).toBe('{"10":true,"9":2.5,"b":1,"c":[1,null,null,{"x":0,"z":"é\\"\\n"}],"d":{},"e":[]}');
    expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)));
    expect(canonicalJson({ y: 1, x: { q: 2, p: 3 } })).toBe(canonicalJson({ x: { p: 3, q: 2 }, y: 1 }));
    for (const p of [null, 1, 'x', true, undefined]) expect(canonicalJson(p)).toBe(JSON.stringify(p) ?? 'null');
    expect(canonicalJson({ b: 1, a: undefined, c: 'x', d: null })).toBe('{"b":1,"c":"x","d":null}'); // a flat object: its own fast path
    expect(canonicalJson([3, undefined, 'y'])).toBe('[3,null,"y"]');
    const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${(i * 7) % 40}`, i]));
    expect(Object.keys(JSON.parse(canonicalJson(many)) as object)).toEqual(Object.keys(many).sort());
  });

  it('takes values nested 100,000 levels deep without overflowing the stack', () => {
    const deep = nested(100_000);
    const text = canonicalJson(deep);
    expect(text.length).toBe(100_000 * 2 + 50_000 * 4 + 1);
    expect(digest(deep)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(digest(nested(100_000))).toBe(digest(deep));
  });
});

describe('nestsDeeperThan', () => {
  it('counts levels of objects and arrays, not of primitives', () => {
    expect(nestsDeeperThan(1, 1)).toBe(false);
    expect(nestsDeeperThan({}, 1)).toBe(false);
    expect(nestsDeeperThan({ a: 1, b: [1] }, 1)).toBe(true);
    expect(nestsDeeperThan({ a: 1, b: [1] }, 2)).toBe(false);
    expect(nestsDeeperThan(nested(64), 64)).toBe(false);
    expect(nestsDeeperThan(nested(65), 64)).toBe(true);
    expect(nestsDeeperThan(nested(100_000), 1000)).toBe(true);
  });

  it('ends on a cycle (it counts as too deep)', () => {
    const a: Record<string, unknown> = {};
    a['self'] = a;
    expect(nestsDeeperThan(a, 50)).toBe(true);
  });
});
