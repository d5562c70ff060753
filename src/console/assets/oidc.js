// toolgate console: "Sign in with <issuer>", OAuth 2.1 authorization code + PKCE (S256) as a
// public client. Plain ES2020, loaded before app.js, which calls window.toolgateOidc.
//
// Security rules this file keeps:
// - No client secret exists here: the client is public; the PKCE verifier proves the code is ours.
// - The verifier and state live in sessionStorage (this tab) for one sign-in, and are removed as
//   soon as the issuer's answer arrives, whatever it says.
// - The answer is taken only when its state matches the one this tab sent, and its `iss` (RFC
//   9207), when present, names the configured issuer; the code leaves the address bar at once.
// - Network access: the issuer's discovery document and its token endpoint only, on the issuer's
//   origin (the page's Content-Security-Policy allows no other), without cookies or referrer.
'use strict';

(function () {
  const PENDING = 'toolgate.console.oidc.pending';
  const PENDING_MAX_MS = 10 * 60 * 1000;

  const b64url = (bytes) => {
    let s = '';
    for (const b of bytes) s += String.fromCharCode(b);
    return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  };
  const randomToken = () => b64url(crypto.getRandomValues(new Uint8Array(32)));
  const s256 = async (v) => b64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(v))));
  const redirectUri = () => window.location.origin + '/console';
  const message = (e) => (e && e.message ? e.message : String(e));

  /** The page's settings from /console/config.json, or null when sign-in is not configured. */
  async function settings() {
    try {
      const res = await fetch('/console/config.json', { mode: 'same-origin', credentials: 'omit', cache: 'no-store', redirect: 'error' });
      const body = res.ok ? await res.json() : null;
      const o = body && body.oidc;
      if (o && typeof o.issuer === 'string' && typeof o.clientId === 'string' && Array.isArray(o.scopes)) return o;
    } catch (e) {
      // no config: the key form alone
    }
    return null;
  }

  function onIssuerOrigin(cfg, url) {
    const u = new URL(url);
    if (u.origin !== new URL(cfg.issuer).origin) throw new Error('the issuer names an endpoint on another origin (' + u.origin + '); the console talks to ' + new URL(cfg.issuer).origin + ' only');
    return u;
  }

  function issuerFetch(cfg, url, init) {
    const u = onIssuerOrigin(cfg, url);
    return fetch(u.href, Object.assign({}, init, { mode: 'cors', credentials: 'omit', cache: 'no-store', redirect: 'error', referrerPolicy: 'no-referrer' }));
  }

  async function discover(cfg) {
    const res = await issuerFetch(cfg, cfg.issuer.replace(/\/$/, '') + '/.well-known/openid-configuration', { headers: { accept: 'application/json' } });
    if (!res.ok) throw new Error('its discovery document answered HTTP ' + res.status);
    const d = await res.json();
    if (!d || d.issuer !== cfg.issuer) throw new Error('its discovery document names another issuer');
    if (typeof d.authorization_endpoint !== 'string' || typeof d.token_endpoint !== 'string') throw new Error('its discovery document lacks an authorization or token endpoint');
    if (Array.isArray(d.code_challenge_methods_supported) && !d.code_challenge_methods_supported.includes('S256')) throw new Error('it does not support PKCE with S256');
    return d;
  }

  function store() {
    try {
      return window.sessionStorage;
    } catch (e) {
      return null;
    }
  }

  /** Starts the sign-in: leaves the page for the issuer's authorization endpoint. */
  async function start(cfg) {
    const ss = store();
    if (!ss) throw new Error('sessionStorage is unavailable in this browser: sign in with a pasted key instead');
    const d = await discover(cfg);
    onIssuerOrigin(cfg, d.token_endpoint); // fail before leaving the page, not after
    const verifier = randomToken();
    const state = randomToken();
    ss.setItem(PENDING, JSON.stringify({ state, verifier, issuer: cfg.issuer, tokenEndpoint: d.token_endpoint, at: Date.now() }));
    const u = new URL(d.authorization_endpoint);
    const q = { response_type: 'code', client_id: cfg.clientId, redirect_uri: redirectUri(), scope: cfg.scopes.join(' '), state, code_challenge: await s256(verifier), code_challenge_method: 'S256' };
    if (cfg.resource) q.resource = cfg.resource;
    for (const [k, v] of Object.entries(q)) u.searchParams.set(k, v);
    window.location.assign(u.href);
  }

  /** True when this page load is the issuer's answer (its query has a state and a code or an error). */
  function isCallback() {
    const q = new URLSearchParams(window.location.search);
    return q.has('state') && (q.has('code') || q.has('error'));
  }

  /** The display name in an access token that is a JWT (not verified here: the gateway verifies it). */
  function subjectOf(token) {
    try {
      const part = token.split('.')[1];
      const p = JSON.parse(atob(part.replace(/-/g, '+').replace(/_/g, '/')));
      return typeof p.name === 'string' ? p.name : typeof p.sub === 'string' ? p.sub : null;
    } catch (e) {
      return null;
    }
  }

  /**
   * Completes the sign-in from the issuer's answer in the address bar: resolves to
   * { token, who } or throws with a reason to show. The answer is consumed either way.
   */
  async function finish(cfg) {
    const q = new URLSearchParams(window.location.search);
    window.history.replaceState(null, '', '/console'); // the code leaves the address bar and history now
    const ss = store();
    let pending = null;
    try {
      pending = JSON.parse((ss && ss.getItem(PENDING)) || 'null');
    } catch (e) {
      pending = null;
    }
    if (ss) ss.removeItem(PENDING);
    if (!pending || typeof pending.state !== 'string' || typeof pending.verifier !== 'string' || q.get('state') !== pending.state)
      throw new Error('the sign-in answer does not match a sign-in started in this tab (state): ignored');
    if (pending.issuer !== cfg.issuer) throw new Error('the sign-in was started with another issuer: ignored');
    if (!(Date.now() - pending.at < PENDING_MAX_MS)) throw new Error('the sign-in took too long: start again');
    const iss = q.get('iss');
    if (iss !== null && iss !== cfg.issuer) throw new Error('the answer comes from another issuer (iss): ignored');
    const error = q.get('error');
    if (error !== null) throw new Error('the issuer refused: ' + error + (q.get('error_description') ? ' (' + q.get('error_description') + ')' : ''));
    const code = q.get('code');
    if (!code) throw new Error('the answer carries no code');
    const body = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri(), client_id: cfg.clientId, code_verifier: pending.verifier });
    if (cfg.resource) body.set('resource', cfg.resource);
    let res;
    try {
      res = await issuerFetch(cfg, pending.tokenEndpoint, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body });
    } catch (e) {
      throw new Error('the token endpoint could not be reached: ' + message(e));
    }
    let t = null;
    try {
      t = await res.json();
    } catch (e) {
      t = null;
    }
    if (!res.ok || !t || typeof t.access_token !== 'string' || !t.access_token) {
      const why = t && typeof t.error === 'string' ? t.error + (typeof t.error_description === 'string' ? ' (' + t.error_description + ')' : '') : 'HTTP ' + res.status;
      throw new Error('the token endpoint refused: ' + why);
    }
    if (typeof t.token_type === 'string' && t.token_type.toLowerCase() !== 'bearer') throw new Error('the issuer returned a ' + t.token_type + ' token; the console sends Bearer tokens only');
    return { token: t.access_token, who: subjectOf(t.access_token) };
  }

  window.toolgateOidc = Object.freeze({ settings, start, isCallback, finish, message });
})();
