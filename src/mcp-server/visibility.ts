import { globToRegExp, type Caller } from '../auth/caller.js';

/**
 * Who sees which resources and prompts through /mcp.
 *
 * 1. The server file: `resources: { include, exclude }` and `prompts: { include, exclude }`, globs on
 *    the server's own URIs, URI templates and prompt names (default: all).
 * 2. The caller: a key's `resources` / `prompts` globs match the URIs and prompt names as /mcp lists
 *    them (a URI also in its decoded form, `toolgate://files/file:///docs/*`). Without them (and
 *    for OIDC callers, whose tokens carry tool globs only) the rule is derived from the tool globs:
 *    a server's resources and prompts are visible when the caller's tool globs cover the server's
 *    whole namespace (`*`, `files.*`, `files*`), not when they name some of its tools only: a key
 *    narrowed to `files.read_file` does not see what `files` serves besides. For a server with
 *    `prefix: ""` only a glob covering every name (`*`) does.
 *
 * Hidden ones are listed nowhere and read as a missing one (no existence leak).
 */
export type OwnFilter = (own: string) => boolean;

/** The server file's include/exclude globs as a predicate on the server's own names. */
export function ownFilter(filter: { include?: string[] | undefined; exclude?: string[] | undefined } | undefined): OwnFilter {
  const include = filter?.include?.map(globToRegExp);
  const exclude = filter?.exclude?.map(globToRegExp) ?? [];
  return (own) => (include === undefined || include.some((re) => re.test(own))) && !exclude.some((re) => re.test(own));
}

/** A name no tool has (U+0001): a tool glob matches `<prefix>.<it>` only through a `*` there. */
const PROBE = '\u0001';

/** The caller's tool globs cover every tool name the server could have. */
export function coversServer(caller: Caller, prefix: string): boolean {
  const probe = prefix === '' ? PROBE : `${prefix}.${PROBE}`;
  return caller.toolPatterns.some((re) => re.test(probe));
}

function decoded(uri: string): string {
  try {
    return decodeURIComponent(uri);
  } catch {
    return uri;
  }
}

/** The caller may see the resource (or template) listed as `listed`, of the server with this prefix. */
export function seesResource(caller: Caller, prefix: string, listed: string): boolean {
  const globs = caller.resourcePatterns;
  if (!globs) return coversServer(caller, prefix);
  const plain = decoded(listed);
  return globs.some((re) => re.test(listed) || re.test(plain));
}

/** The caller may see the prompt listed as `listed`. */
export function seesPrompt(caller: Caller, prefix: string, listed: string): boolean {
  const globs = caller.promptPatterns;
  return globs ? globs.some((re) => re.test(listed)) : coversServer(caller, prefix);
}

/** The caller may see something of the server (its list_changed and log messages reach the caller's sessions). */
export function seesServer(caller: Caller, prefix: string): boolean {
  return caller.resourcePatterns !== undefined || caller.promptPatterns !== undefined || coversServer(caller, prefix);
}
