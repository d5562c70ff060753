/** `${env:NAME}` expansion for config and tool files. */

/** `${env:NAME}`, or `${env:NAME:-default}` (the default when NAME is unset or empty, as in sh). */
const ENV_REF = /\$\{env:([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export type Env = Readonly<Record<string, string | undefined>>;

/**
 * Returns a copy of `value` with every `${env:NAME}` in a string replaced by the variable's
 * value (empty when unset). Each non-empty value substituted is added to `secrets`, so that
 * redaction can keep it out of logs and the audit trail whatever key it ends up under. A default
 * is masked as well (the loader cannot tell a default key from a default port; values under 6
 * characters are never masked), and a variable that falls back to it is not unset.
 */
export function expandEnv(value: unknown, env: Env, secrets: Set<string>, unset?: Set<string>): unknown {
  if (typeof value === 'string') {
    if (!value.includes('${env:')) return value;
    return value.replace(ENV_REF, (_m, name: string, fallback: string | undefined) => {
      const v = env[name] ?? '';
      if (v === '' && fallback !== undefined) {
        if (fallback !== '') secrets.add(fallback);
        return fallback;
      }
      if (v === '') unset?.add(name);
      else secrets.add(v);
      return v;
    });
  }
  if (Array.isArray(value)) return value.map((v) => expandEnv(v, env, secrets, unset));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = expandEnv(v, env, secrets, unset);
    return out;
  }
  return value;
}
