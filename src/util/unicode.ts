const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** No lone surrogate: the text encodes to UTF-8 as it reads (String#isWellFormed, ES2024). */
export function isWellFormed(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}
