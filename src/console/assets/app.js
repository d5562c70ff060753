// toolgate approvals console. Plain ES2020, no framework, no build step.
//
// Security rules this file keeps:
// - Every value from the API is shown with textContent (or as an attribute value through
//   setAttribute/dataset), never parsed as HTML: tool arguments are attacker-controlled.
// - The key lives in this tab only (sessionStorage, or memory when that is unavailable) and is sent
//   only as `Authorization: Bearer` to relative URLs of this origin: /v1/…, GET /admin/mcp,
//   GET /admin/openapi and POST /admin/tools/{name}/accept (fetch mode same-origin, no credentials, no referrer, no
//   redirects followed).
// - A held tool's definition is an MCP server's (or an OpenAPI document's) own text, possibly written to steer a model: it is
//   shown as text, with invisible characters made visible, never as HTML.
'use strict';

(function () {
  const KEY_STORE = 'toolgate.console.key';
  const WHO_STORE = 'toolgate.console.who';
  const POLL_MS = 5000;
  const MAX_TOOL_DETAILS = 200;
  const DETAIL_CONCURRENCY = 4;
  const MAX_CELL_CHARS = 4000;

  /** null: not connected; '' : connected without a key (a gateway with no keys configured). */
  let key = null;
  let memoryKey = null;
  /** Who the key is, when it came from "Sign in with <issuer>" (shown in the status line). */
  let who = null;
  let oidcSettings = null;
  let pollTimer = null;
  let pendingInFlight = false;
  let pendingAgain = false;
  let auditCursor = null;
  let auditAllowed = true;
  const cards = new Map(); // confirmation id -> { root, ageEl, expEl, c, busy }
  const decided = new Set(); // ids decided from this page (a poll that raced the decision must not bring them back)

  const $ = (id) => {
    const e = document.getElementById(id);
    if (!e) throw new Error('console: missing #' + id);
    return e;
  };

  /** createElement with properties (className, type, ...) and children (strings become text nodes). */
  function el(tag, props, ...children) {
    const e = document.createElement(tag);
    if (props) {
      for (const [k, v] of Object.entries(props)) {
        if (v === undefined || v === null) continue;
        if (k === 'dataset') for (const [dk, dv] of Object.entries(v)) e.dataset[dk] = String(dv);
        else if (k === 'text') e.textContent = String(v);
        else if (k === 'className' || k === 'type' || k === 'placeholder' || k === 'maxLength' || k === 'title' || k === 'disabled' || k === 'hidden') e[k] = v;
        else if (k.startsWith('aria-')) e.setAttribute(k, String(v));
        else throw new Error('console: property not allowed: ' + k);
      }
    }
    for (const c of children) {
      if (c === undefined || c === null || c === false) continue;
      e.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
    }
    return e;
  }

  /** A class-name-safe token from a server value (states, outcomes). */
  const token = (v) => (typeof v === 'string' && /^[a-z_]{1,32}$/.test(v) ? v : 'unknown');

  function clip(s) {
    return s.length > MAX_CELL_CHARS ? s.slice(0, MAX_CELL_CHARS) + ' … [' + (s.length - MAX_CELL_CHARS) + ' more characters]' : s;
  }

  function json(v) {
    try {
      return JSON.stringify(v, null, 2) ?? String(v);
    } catch (e) {
      return String(v);
    }
  }

  function readStoredKey() {
    try {
      return window.sessionStorage.getItem(KEY_STORE);
    } catch (e) {
      return memoryKey;
    }
  }

  function readStoredWho() {
    try {
      return window.sessionStorage.getItem(WHO_STORE);
    } catch (e) {
      return null;
    }
  }

  function storeKey(k) {
    memoryKey = k;
    try {
      if (k === null) window.sessionStorage.removeItem(KEY_STORE);
      else window.sessionStorage.setItem(KEY_STORE, k);
      if (who === null) window.sessionStorage.removeItem(WHO_STORE);
      else window.sessionStorage.setItem(WHO_STORE, who);
    } catch (e) {
      // sessionStorage unavailable: memory only
    }
  }

  const ADMIN_PATHS = [/^\/admin\/mcp$/, /^\/admin\/openapi$/, /^\/admin\/tools\/[^/?#]+\/accept$/];

  /** The only network access of the page: same-origin /v1/ calls (and the three admin routes of held tools) carrying the key. */
  async function api(path, opts) {
    if (typeof path !== 'string' || !(path.startsWith('/v1/') || ADMIN_PATHS.some((re) => re.test(path)))) {
      throw new Error('console: refusing a request outside /v1/ and the held-tool admin routes');
    }
    const headers = { accept: 'application/json' };
    if (key) headers.authorization = 'Bearer ' + key;
    const init = {
      method: (opts && opts.method) || 'GET',
      headers,
      mode: 'same-origin',
      credentials: 'omit',
      cache: 'no-store',
      redirect: 'error',
      referrerPolicy: 'no-referrer',
    };
    if (opts && opts.body !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(opts.body);
    }
    let res;
    try {
      res = await fetch(path, init);
    } catch (e) {
      return { ok: false, status: 0, body: null, error: 'network error: ' + (e && e.message ? e.message : String(e)) };
    }
    let body = null;
    try {
      body = await res.json();
    } catch (e) {
      body = null;
    }
    const err = body && typeof body === 'object' && body.error && typeof body.error === 'object' ? body.error : null;
    const error = res.ok ? null : err ? String(err.code) + ': ' + String(err.message) : 'HTTP ' + res.status;
    return { ok: res.ok, status: res.status, body, error };
  }

  function setStatus(text, isError) {
    const s = $('status');
    s.textContent = text;
    s.classList.toggle('error', Boolean(isError));
  }

  function showMessage(id, text, isError) {
    const m = $(id);
    m.textContent = text || '';
    m.hidden = !text;
    m.classList.toggle('error', Boolean(isError));
  }

  function describeAuthError(res, role) {
    if (res.status === 401) return 'The key was not accepted (401 ' + res.error + ').';
    if (res.status === 403) return 'This key lacks the ' + role + ' role (' + res.error + ').';
    return res.error || 'request failed';
  }

  function ago(ms) {
    const s = Math.max(0, Math.round(ms / 1000));
    if (s < 60) return s + ' s';
    const m = Math.floor(s / 60);
    if (m < 60) return m + ' min ' + (s % 60) + ' s';
    const h = Math.floor(m / 60);
    return h + ' h ' + (m % 60) + ' min';
  }

  function localTime(iso) {
    const t = Date.parse(iso);
    return Number.isFinite(t) ? new Date(t).toLocaleString() : String(iso);
  }

  // ---- pending confirmations ----

  function meta(pairs) {
    const dl = el('dl', { className: 'meta' });
    for (const [k, v] of pairs) {
      if (v === undefined) continue;
      dl.appendChild(el('dt', null, k));
      dl.appendChild(typeof v === 'object' && v !== null && v.nodeType ? el('dd', null, v) : el('dd', null, v === null ? '—' : String(v)));
    }
    return dl;
  }

  function buildCard(c) {
    const ageEl = el('span', { className: 'age' });
    const expEl = el('span', { className: 'expiry' });
    const note = el('input', { className: 'note', type: 'text', placeholder: 'note (optional, kept in the audit log)', maxLength: 2000, 'aria-label': 'note' });
    const approve = el('button', { className: 'approve', type: 'button' }, 'Approve');
    const reject = el('button', { className: 'reject', type: 'button' }, 'Reject');
    const root = el(
      'article',
      { className: 'confirmation', dataset: { id: c.id, callId: c.callId } },
      el('div', { className: 'title tool' }, String(c.tool)),
      meta([
        ['caller', el('span', { className: 'caller' }, String(c.caller))],
        ['session', el('span', { className: 'session' }, c.sessionId === null || c.sessionId === undefined ? '—' : String(c.sessionId))],
        ['requested', el('span', null, localTime(c.createdAt) + ' (', ageEl, ' ago)')],
        ['expires', el('span', null, localTime(c.expiresAt) + ' (', expEl, ')')],
        ['confirmation', String(c.id)],
        ['call', String(c.callId)],
      ]),
      el('div', { className: 'muted' }, 'arguments (redacted):'),
      el('pre', { className: 'args' }, clip(json(c.arguments))),
      c.summary ? el('div', { className: 'muted summary' }, 'summary: ' + String(c.summary)) : null,
      el('div', { className: 'actions' }, note, approve, reject),
    );
    const card = { root, ageEl, expEl, c, busy: false };
    const decide = async (decision) => {
      card.busy = true;
      approve.disabled = true;
      reject.disabled = true;
      const text = note.value.trim();
      const res = await api('/v1/confirmations/' + encodeURIComponent(c.id) + '/' + decision, { method: 'POST', body: text ? { note: text } : {} });
      addDecision(c, decision, res, text);
      card.busy = false;
      if (res.ok) {
        // Decided: no longer pending, whatever a poll in flight may still say.
        card.root.remove();
        cards.delete(c.id);
        decided.add(c.id);
      }
      approve.disabled = false;
      reject.disabled = false;
      await loadPending();
      if (auditAllowed) void loadAudit(true);
    };
    approve.addEventListener('click', () => void decide('approve'));
    reject.addEventListener('click', () => void decide('reject'));
    return card;
  }

  function updateTimes() {
    const now = Date.now();
    for (const card of cards.values()) {
      const created = Date.parse(card.c.createdAt);
      const expires = Date.parse(card.c.expiresAt);
      card.ageEl.textContent = Number.isFinite(created) ? ago(now - created) : '?';
      if (!Number.isFinite(expires)) card.expEl.textContent = '?';
      else if (expires <= now) card.expEl.textContent = 'expired';
      else card.expEl.textContent = 'in ' + ago(expires - now);
      card.expEl.classList.toggle('expiring', Number.isFinite(expires) && expires - now < 60000);
    }
  }

  function renderPending(list) {
    const sorted = list.slice().sort((a, b) => String(a.createdAt).localeCompare(String(b.createdAt)));
    const seen = new Set();
    const box = $('pending-list');
    for (const c of sorted) {
      if (!c || typeof c.id !== 'string' || decided.has(c.id)) continue;
      seen.add(c.id);
      if (!cards.has(c.id)) {
        const card = buildCard(c);
        cards.set(c.id, card);
        box.appendChild(card.root);
      }
    }
    for (const [id, card] of cards) {
      if (!seen.has(id) && !card.busy) {
        card.root.remove();
        cards.delete(id);
      }
    }
    $('pending-count').textContent = cards.size ? '(' + cards.size + ')' : '';
    $('pending-empty').hidden = cards.size > 0;
    updateTimes();
  }

  function clearPending() {
    for (const card of cards.values()) card.root.remove();
    cards.clear();
    $('pending-count').textContent = '';
    $('pending-empty').hidden = true;
  }

  async function loadPending() {
    if (key === null) return;
    if (pendingInFlight) {
      pendingAgain = true; // one more round once this one is done, so a decision's refresh is never lost
      return;
    }
    pendingInFlight = true;
    try {
      const res = await api('/v1/confirmations?status=pending');
      if (!res.ok) {
        clearPending();
        showMessage('pending-message', describeAuthError(res, 'approver'), res.status !== 403);
        if (res.status === 401) setStatus(who !== null ? 'The sign-in was not accepted or has expired. Sign in again.' : 'The key was not accepted. Enter another one.', true);
        return;
      }
      showMessage('pending-message', '');
      renderPending(Array.isArray(res.body && res.body.confirmations) ? res.body.confirmations : []);
      setStatus((who !== null ? 'Signed in as ' + who + '.' : 'Connected.') + ' Pending list refreshed at ' + new Date().toLocaleTimeString() + '.', false);
    } finally {
      pendingInFlight = false;
      if (pendingAgain) {
        pendingAgain = false;
        void loadPending();
      }
    }
  }

  // ---- decisions ----

  function resultBlocks(result) {
    const out = [];
    if (!result || typeof result !== 'object') return out;
    const content = Array.isArray(result.content) ? result.content : [];
    for (const block of content) {
      if (block && block.type === 'text' && typeof block.text === 'string') out.push(el('pre', { className: 'result-text' }, clip(block.text)));
      else out.push(el('pre', { className: 'result-block' }, clip(json(block))));
    }
    if (result.structuredContent !== undefined) {
      out.push(el('div', { className: 'muted' }, 'structured content:'));
      out.push(el('pre', { className: 'result-structured' }, clip(json(result.structuredContent))));
    }
    return out;
  }

  function addDecision(c, decision, res, note) {
    const b = res.body && typeof res.body === 'object' ? res.body : {};
    let cls;
    let title;
    if (!res.ok) {
      cls = 'bad';
      title = (decision === 'approve' ? 'Approval of ' : 'Rejection of ') + String(c.tool) + ' failed: ' + res.error;
    } else if (decision === 'reject') {
      cls = 'rejected';
      title = 'Rejected ' + String(c.tool);
    } else {
      cls = b.status === 'ok' ? 'ok' : 'bad';
      title = 'Approved ' + String(c.tool) + ' → ' + String(b.status);
    }
    const box = el(
      'article',
      { className: 'result ' + cls, dataset: { callId: c.callId, confirmationId: c.id, decision } },
      el('div', { className: 'title' }, title),
      meta([
        ['caller', String(c.caller)],
        ['call', String(c.callId)],
        ['confirmation', String(c.id)],
        ['decided', new Date().toLocaleTimeString()],
        ['note', note ? note : undefined],
        ['backend', b.backend !== undefined ? String(b.backend) : undefined],
        ['attempts', b.attempts !== undefined ? String(b.attempts) : undefined],
        ['duration', b.durationMs !== undefined ? String(b.durationMs) + ' ms' : undefined],
        ['fallback', b.fallback ? json(b.fallback) : undefined],
      ]),
      ...(res.ok && decision === 'approve' ? resultBlocks(b.result) : []),
      !res.ok && b.error && b.error.modelMessage ? el('pre', { className: 'result-error' }, clip(String(b.error.modelMessage))) : null,
    );
    const list = $('decisions');
    list.insertBefore(box, list.firstChild);
    $('decisions-empty').hidden = true;
  }

  // ---- tools ----

  function backendCell(td, detail) {
    td.replaceChildren();
    if (!detail) {
      td.appendChild(el('span', { className: 'muted' }, 'not loaded'));
      return;
    }
    if (!detail.ok) {
      td.appendChild(el('span', { className: 'muted' }, detail.error || 'unavailable'));
      return;
    }
    const backends = Array.isArray(detail.body && detail.body.backends) ? detail.body.backends : [];
    if (!backends.length) td.appendChild(el('span', { className: 'muted' }, 'none'));
    for (const b of backends) {
      const parts = [String(b.id) + ' (' + String(b.kind) + ')', String(b.state)];
      if (typeof b.errorRate === 'number') parts.push(Math.round(b.errorRate * 100) + ' % errors');
      parts.push(typeof b.latencyMs === 'number' ? b.latencyMs + ' ms' : '— ms');
      if (typeof b.retryAfterMs === 'number') parts.push('retry in ' + ago(b.retryAfterMs));
      td.appendChild(el('span', { className: 'state state-' + token(b.state), dataset: { backend: String(b.id), state: String(b.state) } }, parts.join(' · ')));
      // An MCP server that is not up says why, in GET /admin/mcp's words.
      if (b.kind === 'mcp' && typeof b.serverState === 'string' && b.serverState !== 'up') {
        td.appendChild(
          el(
            'div',
            { className: 'mcp-server muted', dataset: { server: String(b.server), serverState: b.serverState } },
            'MCP server ' + String(b.server) + ': ' + b.serverState + (typeof b.lastError === 'string' && b.lastError ? ' · ' + clip(b.lastError) : ''),
          ),
        );
      }
    }
  }

  async function loadTools() {
    if (key === null) return;
    const res = await api('/v1/tools');
    if (!res.ok) {
      $('tools-table').hidden = true;
      showMessage('tools-message', describeAuthError(res, 'needed'), true);
      return;
    }
    const tools = Array.isArray(res.body && res.body.tools) ? res.body.tools : [];
    const rows = [];
    const cells = [];
    for (const t of tools) {
      const td = el('td', { className: 'backends' }, el('span', { className: 'muted' }, '…'));
      const row = el(
        'tr',
        { dataset: { tool: String(t.name) } },
        el(
          'td',
          { className: 'tool-name' },
          String(t.name),
          t.deprecated ? el('span', { className: 'muted' }, ' (deprecated)') : null,
          // A held MCP tool: calls are refused until an admin accepts (the held tools section says why).
          t.mcp && t.mcp.held ? el('span', { className: 'reason held-mark', dataset: { reason: token(t.mcp.heldReason) } }, 'held: ' + (t.mcp.heldReason === 'poisoned' ? 'definition with findings' : 'changed definition')) : null,
          t.openapi && t.openapi.held ? el('span', { className: 'reason held-mark', dataset: { reason: token(t.openapi.heldReason) } }, 'held: ' + (t.openapi.heldReason === 'poisoned' ? 'definition with findings' : 'changed definition')) : null,
        ),
        el('td', null, String(t.sideEffect)),
        el('td', null, String(t.confirm)),
        td,
      );
      rows.push(row);
      cells.push({ name: String(t.name), td });
    }
    $('tools-body').replaceChildren(...rows);
    $('tools-table').hidden = tools.length === 0;
    showMessage(
      'tools-message',
      tools.length === 0 ? 'This key sees no tools.' : tools.length > MAX_TOOL_DETAILS ? 'Backend state is shown for the first ' + MAX_TOOL_DETAILS + ' of ' + tools.length + ' tools.' : '',
      false,
    );
    const queue = cells.slice(0, MAX_TOOL_DETAILS);
    const worker = async () => {
      for (let item = queue.shift(); item; item = queue.shift()) {
        const detail = await api('/v1/tools/' + encodeURIComponent(item.name));
        backendCell(item.td, detail);
      }
    };
    await Promise.all(Array.from({ length: DETAIL_CONCURRENCY }, worker));
    for (const rest of cells.slice(MAX_TOOL_DETAILS)) backendCell(rest.td, null);
  }

  // ---- held MCP tools ----

  // Unicode tags, zero-width and bidi controls, word joiners, BOM: shown as \u{…} so the admin sees them.
  const INVISIBLE = /[\u{E0000}-\u{E007F}\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/gu;
  const visible = (text) => text.replace(INVISIBLE, (c) => '\\u{' + c.codePointAt(0).toString(16).toUpperCase() + '}');

  /** One finding as a badge: kind · action ×count (never the matched text: records do not carry it). */
  function findingBadge(f) {
    const parts = [String(f.kind), String(f.action)];
    const count = typeof f.count === 'number' && f.count > 1 ? ' ×' + f.count : '';
    return el('span', { className: 'finding action-' + token(f.action), dataset: { kind: String(f.kind), action: String(f.action) } }, parts.join(' · ') + count);
  }

  function findingsTable(findings) {
    const rows = findings.map((f) =>
      el(
        'tr',
        { dataset: { kind: String(f.kind), path: String(f.path) } },
        el('td', null, String(f.kind)),
        el('td', null, String(f.field)),
        el('td', { className: 'path' }, visible(String(f.path)) + (f.key ? ' (property name)' : '')),
        el('td', null, String(f.count)),
        el('td', null, Array.isArray(f.offsets) ? f.offsets.map((o) => Array.isArray(o) ? o[0] + '–' + o[1] : '?').join(', ') : ''),
      ),
    );
    return el(
      'table',
      { className: 'findings' },
      el('thead', null, el('tr', null, el('th', null, 'kind'), el('th', null, 'field'), el('th', null, 'JSON path'), el('th', null, 'count'), el('th', null, 'byte offsets'))),
      el('tbody', null, ...rows),
    );
  }

  /** `origin`: where the tool comes from, as [label, value] rows; `whose`: whose text the definition is. */
  function heldCard(origin, whose, h) {
    const poisoned = h.reason === 'poisoned';
    const kinds = poisoned ? Array.from(new Set((h.findings || []).map((f) => String(f.kind)))) : [];
    const why = poisoned
      ? 'poisoned definition: ' + kinds.join(', ') + (h.oldHash === null ? ' (new tool: listed nowhere)' : ' (changed: the accepted definition stays listed)')
      : 'changed definition';
    const accept = el('button', { className: 'accept', type: 'button' }, 'Accept this definition');
    const result = el('div', { className: 'muted accept-result' });
    const root = el(
      'article',
      { className: 'held reason-' + token(h.reason), dataset: { tool: String(h.tool), reason: String(h.reason) } },
      el('div', { className: 'title' }, String(h.tool), el('span', { className: 'reason' }, why)),
      meta([
        ...origin,
        ['accepted hash', h.oldHash === null ? 'none (never accepted)' : String(h.oldHash)],
        ['held hash', String(h.newHash)],
      ]),
      poisoned && Array.isArray(h.findings) && h.findings.length ? findingsTable(h.findings) : null,
      typeof h.findingsOmitted === 'number' && h.findingsOmitted > 0 ? el('div', { className: 'muted' }, '… and ' + h.findingsOmitted + ' more findings (not listed)') : null,
      el('div', { className: 'muted' }, 'held definition (' + whose + '; invisible characters shown as \\u{…}):'),
      el('pre', { className: 'definition' }, clip(visible(json(h.definition)))),
      el('div', { className: 'actions' }, accept, result),
    );
    accept.addEventListener('click', async () => {
      accept.disabled = true;
      const res = await api('/admin/tools/' + encodeURIComponent(String(h.tool)) + '/accept', { method: 'POST', body: {} });
      result.textContent = res.ok ? 'Accepted: the tool serves this definition from generation ' + String(res.body && res.body.generation) + ' on.' : 'Accept failed: ' + res.error;
      result.classList.toggle('error', !res.ok);
      if (!res.ok) accept.disabled = false;
      await Promise.all([loadHeld(), loadTools(), auditAllowed ? loadAudit(true) : null]);
    });
    return root;
  }

  async function loadHeld() {
    if (key === null) return;
    const [res, oa] = await Promise.all([api('/admin/mcp'), api('/admin/openapi')]);
    if (!res.ok) {
      $('held-list').replaceChildren();
      $('held-count').textContent = '';
      $('held-empty').hidden = true;
      showMessage('held-message', res.status === 403 ? 'This key lacks the admin role: held tools are shown to admin keys only.' : describeAuthError(res, 'admin'), res.status !== 403);
      return;
    }
    showMessage('held-message', '');
    const cardsOut = [];
    const servers = Array.isArray(res.body && res.body.servers) ? res.body.servers : [];
    for (const srv of servers) {
      for (const h of Array.isArray(srv.held) ? srv.held : []) cardsOut.push(heldCard([['MCP server', String(srv.name)], ['name on the server', String(h.mcpTool)]], "the server's own text", h));
    }
    // Held OpenAPI operations (GET /admin/openapi marks them among the operations).
    const documents = oa.ok && Array.isArray(oa.body && oa.body.documents) ? oa.body.documents : [];
    for (const doc of documents) {
      for (const op of Array.isArray(doc.operations) ? doc.operations : []) {
        if (!op.held) continue;
        const h = { tool: op.tool, reason: op.heldReason, oldHash: op.oldHash === undefined ? null : op.oldHash, newHash: op.newHash, findings: op.findings, findingsOmitted: op.findingsOmitted, definition: op.definition };
        cardsOut.push(heldCard([['OpenAPI document', String(doc.name)], ['operation', String(op.method) + ' ' + String(op.path)]], "the document's own text", h));
      }
    }
    $('held-list').replaceChildren(...cardsOut);
    $('held-count').textContent = cardsOut.length ? '(' + cardsOut.length + ')' : '';
    $('held-empty').hidden = cardsOut.length > 0;
  }

  // ---- audit ----

  function auditRow(r) {
    const label = [r.event && r.event !== 'call' ? r.event : undefined, r.outcome, r.action, r.status]
      .filter((v) => v !== undefined && v !== null && v !== '')
      .map(String)
      .join(' · ');
    const cell = (v) => el('td', null, v === undefined || v === null ? '' : String(v));
    const findings = Array.isArray(r.findings) ? r.findings.filter((f) => f && typeof f === 'object') : [];
    return el(
      'tr',
      {
        className: findings.length ? 'flagged' : undefined,
        dataset: { id: r.id === undefined ? '' : String(r.id), outcome: r.outcome === undefined ? '' : String(r.outcome), findings: String(findings.length) },
      },
      el('td', { className: 'nowrap' }, localTime(r.ts)),
      el('td', { className: 'outcome-' + token(r.outcome) }, label, r.note ? el('div', { className: 'muted note-text' }, 'note: ' + String(r.note)) : null),
      cell(r.tool),
      cell(r.caller),
      cell(r.approver),
      cell(r.callId),
      cell(r.errorCode),
      cell(r.durationMs),
      el('td', { className: 'findings-cell' }, ...findings.map(findingBadge)),
      el('td', null, r.args === undefined ? '' : el('pre', { className: 'audit-args' }, clip(json(r.args)))),
    );
  }

  async function loadAudit(reset) {
    if (key === null) return;
    const q = new URLSearchParams();
    for (const [param, id] of [['tool', 'audit-tool'], ['caller', 'audit-caller'], ['outcome', 'audit-outcome']]) {
      const v = $(id).value.trim();
      if (v) q.set(param, v);
    }
    if ($('audit-flagged').checked) q.set('findings', 'true');
    q.set('limit', $('audit-limit').value || '50');
    if (!reset && auditCursor) q.set('cursor', auditCursor);
    const res = await api('/v1/audit?' + q.toString());
    if (!res.ok) {
      auditAllowed = res.status !== 403 && res.status !== 401;
      $('audit-table').hidden = true;
      $('audit-body').replaceChildren();
      $('audit-more').hidden = true;
      showMessage(
        'audit-message',
        res.status === 403 ? 'This key lacks the admin role: the audit log is shown to admin keys only. Pending confirmations and tools still work.' : describeAuthError(res, 'admin'),
        res.status !== 403,
      );
      return;
    }
    auditAllowed = true;
    const records = Array.isArray(res.body && res.body.records) ? res.body.records : [];
    const rows = records.map(auditRow);
    if (reset) $('audit-body').replaceChildren(...rows);
    else for (const r of rows) $('audit-body').appendChild(r);
    auditCursor = res.body && typeof res.body.nextCursor === 'string' ? res.body.nextCursor : null;
    $('audit-more').hidden = !auditCursor;
    const shown = $('audit-body').childElementCount;
    $('audit-table').hidden = shown === 0;
    showMessage('audit-message', shown === 0 ? 'No audit records match.' : '', false);
  }

  // ---- wiring ----

  function refreshAll() {
    return Promise.all([loadPending(), loadTools(), loadHeld(), loadAudit(true)]);
  }

  function schedule() {
    if (pollTimer !== null) clearInterval(pollTimer);
    pollTimer = null;
    if (key === null || !$('auto').checked) return;
    pollTimer = setInterval(() => {
      if (document.visibilityState === 'visible') void loadPending();
    }, POLL_MS);
  }

  function connect(k, signedInAs) {
    key = k;
    who = typeof signedInAs === 'string' ? signedInAs : null;
    storeKey(k);
    $('key').value = '';
    $('key').placeholder = k ? 'key set for this tab (enter another to switch)' : 'no key (gateway without keys)';
    $('forget').textContent = who !== null ? 'Sign out' : 'Forget key';
    $('forget').hidden = false;
    $('refresh').disabled = false;
    setStatus(k ? 'Connecting…' : 'Connecting without a key (works only when the gateway has no keys configured)…', false);
    clearPending();
    auditCursor = null;
    schedule();
    return refreshAll();
  }

  function forget() {
    key = null;
    who = null;
    storeKey(null);
    schedule();
    clearPending();
    $('decisions').replaceChildren();
    $('decisions-empty').hidden = false;
    $('tools-body').replaceChildren();
    $('tools-table').hidden = true;
    $('audit-body').replaceChildren();
    $('audit-table').hidden = true;
    $('audit-more').hidden = true;
    $('held-list').replaceChildren();
    $('held-count').textContent = '';
    $('held-empty').hidden = true;
    for (const id of ['pending-message', 'tools-message', 'held-message', 'audit-message']) showMessage(id, '');
    $('forget').hidden = true;
    $('refresh').disabled = true;
    $('key').placeholder = 'Bearer key (approver; admin for the audit log)';
    setStatus(oidcSettings ? 'Signed out. Sign in again or enter an API key.' : 'Key forgotten. Enter an API key.', false);
  }

  // ---- "Sign in with <issuer>" (oidc.js) ----

  async function initSignIn() {
    const oidc = window.toolgateOidc;
    if (!oidc) return false;
    oidcSettings = await oidc.settings();
    if (!oidcSettings) return false;
    const button = $('signin');
    let host = oidcSettings.issuer;
    try {
      host = new URL(oidcSettings.issuer).host;
    } catch (e) {
      // shown as configured
    }
    button.textContent = 'Sign in with ' + host;
    button.title = oidcSettings.issuer;
    button.hidden = false;
    button.addEventListener('click', () => {
      button.disabled = true;
      setStatus('Contacting ' + oidcSettings.issuer + '…', false);
      oidc.start(oidcSettings).catch((e) => {
        button.disabled = false;
        setStatus('Sign-in failed: ' + oidc.message(e), true);
      });
    });
    if (!oidc.isCallback()) return false;
    setStatus('Completing the sign-in…', false);
    try {
      const r = await oidc.finish(oidcSettings);
      void connect(r.token, r.who || 'a user of ' + host);
    } catch (e) {
      setStatus('Sign-in failed: ' + oidc.message(e), true);
    }
    return true;
  }

  function init() {
    $('key-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      const typed = $('key').value.trim();
      // An empty field with a key already set just refreshes; on a fresh page it means "no key".
      if (!typed && key !== null) void refreshAll();
      else void connect(typed);
    });
    $('forget').addEventListener('click', forget);
    $('refresh').addEventListener('click', () => void refreshAll());
    $('auto').addEventListener('change', schedule);
    $('audit-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      auditCursor = null;
      void loadAudit(true);
    });
    $('audit-more').addEventListener('click', () => void loadAudit(false));
    setInterval(updateTimes, 1000);
    void initSignIn().then((handled) => {
      if (handled || key !== null) return;
      const stored = readStoredKey();
      if (stored !== null) void connect(stored, readStoredWho());
    });
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
