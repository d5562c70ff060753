import { isSecretName } from '../cli/secrets.js';

/** Query parameters whose value is a credential beyond the secret-like names: an OAuth authorization code. */
const ALSO_SECRET = new Set(['code']);

/**
 * A request URL fit for the log: the value of each secret-like query parameter (access_token,
 * token, api_key, client_secret, code...) replaced by [REDACTED]. The gateway takes no credential
 * from a query string, but a client may send one there (EventSource cannot set headers), and the
 * log must not keep it.
 */
export function loggedUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const query = url.slice(q + 1).split('&').map((pair) => {
    const eq = pair.indexOf('=');
    if (eq < 0) return pair;
    let name = pair.slice(0, eq);
    try {
      name = decodeURIComponent(name.replace(/\+/g, ' '));
    } catch {
      // a malformed escape: judged as written
    }
    return isSecretName(name) || ALSO_SECRET.has(name.toLowerCase()) ? `${pair.slice(0, eq)}=[REDACTED]` : pair;
  });
  return `${url.slice(0, q)}?${query.join('&')}`;
}
