// Engram's web console: one page, a view per URL hash (#/overview, #/search?q=…,
// #/entry/<id>, #/review, #/graph/<name>, …), over engramd's JSON API under /v1/
// (docs/console.md). The token is kept in sessionStorage: for this tab only.
'use strict';

const state = { token: sessionStorage.getItem('engram.token') || '', who: null, timer: null, stream: null };

// ---- DOM helpers: text always goes in as text, never as HTML.
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}
const main = () => document.getElementById('main');
/// Replaces what `el` holds by `nodes` (arrays flattened, null and false left out).
function fill(el, ...nodes) {
  el.replaceChildren(...nodes.flat(Infinity).filter((n) => n !== null && n !== undefined && n !== false));
}
const show = (...nodes) => fill(main(), ...nodes);
const fmt = (x, d = 2) => (typeof x === 'number' ? x.toFixed(d) : x === undefined || x === null ? '' : String(x));
const day = (s) => (s ? String(s).slice(0, 10) : '');
const enc = encodeURIComponent;

// ---- The API.
class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}
async function api(path, opts = {}) {
  const headers = { Authorization: 'Bearer ' + state.token };
  if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
  const r = await fetch(path, {
    method: opts.method || 'GET',
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  let body = null;
  try {
    body = await r.json();
  } catch (e) {
    body = null;
  }
  if (!r.ok) throw new ApiError(r.status, (body && body.error) || r.statusText || 'request failed');
  return body;
}
function errorBox(e) {
  if (e instanceof ApiError && e.status === 401) {
    logout('That token is not accepted: paste a valid one.');
    return h('p');
  }
  if (e instanceof ApiError && e.status === 403) return h('p', { class: 'error', role: 'alert' }, 'Not allowed: ' + e.message);
  return h('p', { class: 'error', role: 'alert' }, e.message || String(e));
}

// ---- Login.
function logout(message) {
  state.token = '';
  state.who = null;
  sessionStorage.removeItem('engram.token');
  document.getElementById('nav').hidden = true;
  document.getElementById('who').textContent = '';
  location.hash = '#/login';
  renderLogin(message);
}
function renderLogin(message) {
  document.body.dataset.page = 'login';
  const input = h('input', { id: 'token', type: 'password', autocomplete: 'off', required: true, 'aria-describedby': 'token-help' });
  const out = h('p', { id: 'login-message', role: 'alert', class: 'error' }, message || '');
  const form = h(
    'form',
    {
      class: 'login',
      onsubmit: async (ev) => {
        ev.preventDefault();
        state.token = input.value.trim();
        try {
          state.who = await api('/v1/whoami');
        } catch (e) {
          state.token = '';
          out.textContent =
            e instanceof ApiError && e.status === 401
              ? 'That token is not accepted: check it and paste it again.'
              : 'Cannot log in: ' + e.message;
          input.focus();
          return;
        }
        sessionStorage.setItem('engram.token', state.token);
        const next = sessionStorage.getItem('engram.next') || '#/overview';
        sessionStorage.removeItem('engram.next');
        location.hash = next;
        route();
      },
    },
    h('h1', {}, 'Log in'),
    h('label', { for: 'token' }, 'Bearer token'),
    input,
    h('p', { id: 'token-help', class: 'meta' }, 'A token from auth.tokens (or the dev token engramd printed at start). It is kept for this tab only.'),
    h('button', { type: 'submit' }, 'Log in'),
    out
  );
  show(form);
  input.focus();
}

// ---- Pages.
async function overview() {
  const body = h('div', {}, h('p', {}, 'Loading…'));
  show(h('h1', {}, 'Overview'), body, h('p', { class: 'meta', id: 'updated' }));
  const samples = [];
  const draw = async () => {
    let s;
    try {
      s = await api('/v1/stats');
    } catch (e) {
      fill(body, errorBox(e));
      return;
    }
    const now = Date.now();
    const events = (s.organizations || []).reduce((n, o) => n + (o.events || 0), 0);
    samples.push([now, events]);
    while (samples.length > 1 && now - samples[0][0] > 60000) samples.shift();
    const first = samples[0];
    const rate = samples.length > 1 && now > first[0] ? ((events - first[1]) * 60000) / (now - first[0]) : null;
    const orgs = (s.organizations || []).map((o) =>
      h('section', { class: 'org' },
        h('h2', {}, o.organizationId),
        h('div', { class: 'cards' },
          card(o.events, 'messages'), card(o.entries, 'entries'), card(o.entities, 'entities'),
          card(o.relations, 'links between entries'), card(o.contacts, 'contacts'), card(o.passages, 'passages'),
          card(o.documents ? o.documents.documents : 0, 'documents'), card(o.bundles, 'bundles')),
        o.entriesByType
          ? h('p', { class: 'meta' }, 'Entries by type: ',
              Object.entries(o.entriesByType).map(([t, n]) => h('span', { class: 'tag' }, t + ' ' + n)))
          : null)
    );
    const parts = h('table', {},
      h('thead', {}, h('tr', {}, h('th', {}, 'partition'), h('th', { class: 'num' }, 'applied offset'),
        h('th', { class: 'num' }, 'high watermark'), h('th', { class: 'num' }, 'lag'))),
      h('tbody', {}, (s.partitions || []).map((p) =>
        h('tr', {}, h('td', {}, p.topic + ' ' + p.partition), h('td', { class: 'num' }, p.appliedOffset),
          h('td', { class: 'num' }, p.highWatermark ?? ''), h('td', { class: 'num' }, p.lag ?? '')))));
    fill(body, 
      orgs.length ? orgs : h('p', {}, 'Nothing stored for this organisation yet.'),
      h('h2', {}, 'Ingest'),
      h('div', { class: 'cards' },
        card(s.ready ? 'yes' : 'no', 'caught up'), card(s.deadLettered, 'dead letters'),
        card(rate === null ? '…' : rate.toFixed(0), 'messages / last minute'),
        card(s.duplicatesSkipped, 'duplicates skipped'), card((s.logGaps || []).length, 'log gaps')),
      parts
    );
    const u = document.getElementById('updated');
    if (u) u.textContent = 'Updated ' + new Date(now).toLocaleTimeString() + ' (live, as events are applied)';
  };
  // Live: redraw when the event stream says something of this organisation was applied (a
  // draw at a time; one more if events came meanwhile), and every 10 s besides.
  let drawing = null, again = false;
  const redraw = async () => {
    if (drawing) {
      again = true;
      return;
    }
    do {
      again = false;
      drawing = draw();
      await drawing;
      drawing = null;
    } while (again);
  };
  await redraw();
  state.timer = setInterval(redraw, 10000);
  listen('/v1/events', (e) => { if (e.type === 'applied') redraw(); });
}

/// Reads an event stream with the token (EventSource cannot send one) until the page changes.
async function listen(path, onEvent) {
  const abort = new AbortController();
  state.stream = abort;
  try {
    const r = await fetch(path, { headers: { Authorization: 'Bearer ' + state.token }, signal: abort.signal });
    if (!r.ok || !r.body) return;
    const reader = r.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        for (const line of block.split('\n'))
          if (line.startsWith('data:'))
            try { onEvent(JSON.parse(line.slice(5))); } catch (e) { /* not JSON: ignored */ }
      }
    }
  } catch (e) {
    /* aborted, or the server went away: the 10 s redraw goes on */
  }
}
function card(value, label) {
  return h('div', { class: 'card', 'data-label': label }, h('b', {}, value ?? 0), h('span', {}, label));
}

const types = ['fact', 'decision', 'event', 'preference', 'goal', 'relationship', 'action_item'];

async function search(params) {
  const q = params.get('q') || '';
  const field = (name, label, el) => h('label', { for: name }, label, el);
  const input = h('input', { id: 'q', name: 'q', type: 'search', value: q, required: true, placeholder: 'What do you want to know?' });
  const type = h('select', { id: 'type', name: 'type' }, h('option', { value: '' }, 'any'),
    types.map((t) => h('option', { value: t, selected: params.get('type') === t }, t)));
  const kind = h('select', { id: 'kind', name: 'kind' }, h('option', { value: '' }, 'entries and passages'),
    h('option', { value: 'entry', selected: params.get('kind') === 'entry' }, 'entries'),
    h('option', { value: 'passage', selected: params.get('kind') === 'passage' }, 'passages'));
  const contact = h('input', { id: 'contact', name: 'contact', value: params.get('contact') || '', placeholder: 'contact id' });
  const since = h('input', { id: 'since', name: 'since', type: 'date', value: params.get('since') || '' });
  const until = h('input', { id: 'until', name: 'until', type: 'date', value: params.get('until') || '' });
  const results = h('div', { id: 'results', 'aria-live': 'polite' });
  const form = h('form', {
    class: 'filters', role: 'search',
    onsubmit: (ev) => {
      ev.preventDefault();
      const p = new URLSearchParams();
      for (const [k, el] of [['q', input], ['type', type], ['kind', kind], ['contact', contact], ['since', since], ['until', until]])
        if (el.value) p.set(k, el.value);
      location.hash = '#/search?' + p.toString();
    },
  }, field('q', 'Query', input), field('type', 'Type', type), field('kind', 'Kind', kind),
  field('contact', 'Contact', contact), field('since', 'Since', since), field('until', 'Until', until),
  h('button', { type: 'submit' }, 'Search'));
  show(h('h1', {}, 'Search'), form, results);
  if (!q) {
    input.focus();
    return;
  }
  const a = new URLSearchParams({ query: q, limit: '20' });
  if (params.get('type')) a.set('type', params.get('type'));
  if (params.get('kind')) a.set('kinds', params.get('kind'));
  if (params.get('contact')) a.set('contactId', params.get('contact'));
  if (params.get('since')) a.set('since', params.get('since') + 'T00:00:00Z');
  if (params.get('until')) a.set('until', params.get('until') + 'T00:00:00Z');
  fill(results, h('p', {}, 'Searching…'));
  try {
    const r = await api('/v1/recall?' + a.toString());
    fill(results, 
      h('p', { class: 'meta' }, r.results.length + ' results'),
      r.results.map((x) =>
        h('article', { class: 'result' },
          x.kind === 'entry'
            ? h('h2', {}, h('a', { href: '#/entry/' + enc(x.id), class: 'result-link' }, x.title))
            : h('h2', {}, 'Passage'),
          x.kind === 'entry' ? h('p', {}, x.content) : h('p', {}, x.text),
          h('p', { class: 'meta' },
            h('span', { class: 'tag' }, x.kind === 'entry' ? x.entryType : 'passage'),
            'score ' + fmt(x.score, 3),
            x.kind === 'entry' ? ' · confidence ' + fmt(x.confidence) + ' · now ' + fmt(x.effectiveConfidence) + ' (decayed)' : '',
            x.status && x.status !== 'active' ? ' · ' + x.status : '',
            ' · ', h('a', { href: '#/message/' + enc(x.eventId) }, 'source message'),
            x.sentAt ? ' · ' + day(x.sentAt) : ''))
      )
    );
  } catch (e) {
    fill(results, errorBox(e));
  }
}

function fields(obj, keys) {
  return h('dl', { class: 'fields' },
    keys.filter((k) => obj[k] !== undefined && obj[k] !== null && obj[k] !== '' && !(Array.isArray(obj[k]) && !obj[k].length))
      .map((k) => [h('dt', {}, k), h('dd', {}, typeof obj[k] === 'object' ? JSON.stringify(obj[k]) : String(obj[k]))]));
}

/// The source text with the entry's sentence marked: its content where the text holds it,
/// else the sentence sharing most of its words.
function highlighted(text, needle) {
  const pre = h('pre', { class: 'source' });
  if (!text) return pre;
  const lower = text.toLowerCase();
  let at = needle ? lower.indexOf(needle.toLowerCase()) : -1;
  let len = needle ? needle.length : 0;
  if (at < 0 && needle) {
    const words = new Set(needle.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) || []);
    let best = 0;
    const re = /[^.!?\n]+[.!?]?/g;
    for (let m; (m = re.exec(text)); ) {
      const ws = m[0].toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) || [];
      const score = ws.filter((w) => words.has(w)).length;
      if (score > best) {
        best = score;
        at = m.index;
        len = m[0].length;
      }
    }
  }
  if (at < 0) {
    pre.textContent = text;
    return pre;
  }
  pre.append(text.slice(0, at), h('mark', {}, text.slice(at, at + len)), text.slice(at + len));
  return pre;
}

function sourceItem(s) {
  return h('li', { class: 'source' }, 'from ', h('a', { href: '#/message/' + enc(s.eventId) }, s.eventId),
    s.sentAt ? ' · ' + s.sentAt : '', s.author ? ' · ' + s.author : '');
}

// The sources an entry's record moved out, from position `offset` on (`left` of them): a button
// that loads them, 500 at a time, in their place.
function movedSources(id, offset, left) {
  const li = h('li', { class: 'meta moved-sources' }, left + ' more source(s) between these ');
  li.append(h('button', { class: 'show-sources', onclick: async () => {
    try {
      const p = await api('/v1/entries/' + enc(id) + '/sources?offset=' + offset + '&limit=' + Math.min(left, 500));
      const got = p.sources.length;
      li.replaceWith(...p.sources.map(sourceItem), ...(got && got < left ? [movedSources(id, offset + got, left - got)] : []));
    } catch (err) {
      fill(li, errorBox(err));
    }
  } }, 'Show them'));
  return li;
}

async function entry(id) {
  show(h('p', {}, 'Loading…'));
  let r;
  try {
    r = await api('/v1/entries/' + enc(id));
  } catch (e) {
    return show(h('h1', {}, 'Entry'), errorBox(e));
  }
  const e = r.entry;
  const hist = r.history || {};
  const message = h('p', { id: 'validate-message', role: 'status' });
  const validate = async (outcome) => {
    try {
      const v = await api('/v1/entries/' + enc(id) + '/validate', { method: 'POST', body: { outcome } });
      message.textContent = outcome + ': confidence ' + fmt(v.confidence) + ' (now ' + fmt(v.effectiveConfidence) + ')';
      message.className = 'ok';
      document.getElementById('confidence').textContent = fmt(v.confidence) + ' (now ' + fmt(v.effectiveConfidence) + ')';
    } catch (err) {
      fill(message, errorBox(err));
    }
  };
  const src = r.source;
  show(
    h('h1', {}, e.title),
    h('p', {}, h('span', { class: 'tag' }, e.entryType), h('span', { class: 'tag' }, e.status),
      ' confidence ', h('b', { id: 'confidence' }, fmt(e.confidence) + ' (now ' + fmt(e.effectiveConfidence) + ')')),
    state.who && state.who.canWrite
      ? h('div', { class: 'actions' },
          h('button', { id: 'approve', onclick: () => validate('approved') }, 'Approve'),
          h('button', { id: 'reject', class: 'bad', onclick: () => validate('rejected') }, 'Reject'))
      : null,
    message,
    h('h2', {}, 'Fields'),
    fields(e, ['id', 'content', 'sourceType', 'sourceId', 'threadId', 'contactIds', 'dueAt', 'expiresAt', 'tags',
      'lastValidatedAt', 'createdAt', 'updatedAt', 'branchId', 'suspicious']),
    fields(hist, ['subject', 'slot', 'value', 'polarity', 'extractor', 'author', 'outcome', 'outcomeReason']),
    h('h2', {}, 'Relations'),
    e.relations && e.relations.length
      ? h('ul', {}, e.relations.map((x) => h('li', {}, x.relationType + ' ',
          h('a', { href: '#/entry/' + enc(x.toId || x.fromId) }, x.toId || x.fromId), x.reason ? ' — ' + x.reason : '')))
      : h('p', { class: 'meta' }, 'None.'),
    e.entities && e.entities.length
      ? [h('h2', {}, 'Mentions'), h('p', {}, e.entities.map((m) =>
          m.kind === 'person' || m.kind === 'organization'
            ? h('a', { class: 'tag', href: '#/entity/' + enc(m.value) }, m.value)
            : h('span', { class: 'tag' }, m.value)))]
      : null,
    h('h2', {}, 'History'),
    h('ul', {},
      // The record keeps the first source and the latest; sourcesMoved counts the ones between.
      (hist.sources || []).map((s, i) => [sourceItem(s), i === 0 && hist.sourcesMoved ? movedSources(id, 1, hist.sourcesMoved) : null]),
      hist.merges ? h('li', {}, 'merged ' + hist.merges + ' time(s)' + (hist.lastMergeReason ? ': ' + hist.lastMergeReason : '')) : null,
      e.supersededBy ? h('li', {}, 'superseded by ', h('a', { href: '#/entry/' + enc(e.supersededBy) }, e.supersededBy)) : null,
      e.review ? h('li', {}, 'review: ' + JSON.stringify(e.review)) : null,
      (hist.validations || []).map((v) => h('li', {}, v.outcome + ' at ' + v.at + (v.by ? ' by ' + v.by : '')))),
    h('h2', {}, 'Source'),
    src
      ? [h('p', { class: 'meta' }, (src.from && (src.from.name || src.from.address)) || '', src.sentAt ? ' · ' + src.sentAt : '',
          src.subject ? ' · ' + src.subject : '', ' · ', h('a', { href: '#/message/' + enc(src.eventId || e.sourceId || '') }, 'open message')),
        highlighted(src.body || src.content || '', e.content)]
      : h('p', { class: 'meta' }, 'No stored source.')
  );
}

async function message(id) {
  try {
    const m = await api('/v1/messages/' + enc(id));
    show(h('h1', {}, m.subject || m.title || 'Message ' + id),
      fields(m, ['eventId', 'sourceType', 'sentAt', 'threadId', 'organizationId']),
      h('p', { class: 'meta' }, 'From ', (m.from && (m.from.name ? m.from.name + ' <' + m.from.address + '>' : m.from.address)) || ''),
      h('pre', { class: 'source' }, m.body || m.content || JSON.stringify(m, null, 2)));
  } catch (e) {
    show(h('h1', {}, 'Message'), errorBox(e));
  }
}

async function review() {
  show(h('h1', {}, 'Review queue'), h('p', {}, 'Loading…'));
  let r;
  try {
    r = await api('/v1/review?limit=50');
  } catch (e) {
    return show(h('h1', {}, 'Review queue'), errorBox(e));
  }
  const side = (label, e) =>
    e
      ? h('div', { class: 'result' }, h('p', { class: 'meta' }, label),
          h('h2', {}, h('a', { href: '#/entry/' + enc(e.id) }, e.title)), h('p', {}, e.content),
          h('p', { class: 'meta' }, day(e.createdAt), ' · confidence ' + fmt(e.effectiveConfidence), ' · ',
            e.sourceId ? h('a', { href: '#/message/' + enc(e.sourceId) }, 'source') : ''))
      : h('div', { class: 'result' }, h('p', { class: 'meta' }, label + ': gone'));
  const status = h('p', { role: 'status', id: 'review-message' });
  const resolve = async (id, keep) => {
    try {
      await api('/v1/review/' + enc(id) + '/resolve', { method: 'POST', body: { keep } });
      status.textContent = 'Resolved (kept ' + keep + ').';
      status.className = 'ok';
      await review();
      document.getElementById('review-message').textContent = 'Resolved (kept ' + keep + ').';
    } catch (e) {
      fill(status, errorBox(e));
    }
  };
  show(
    h('h1', {}, 'Review queue'),
    status,
    r.items.length ? null : h('p', { id: 'review-empty' }, 'Nothing awaits review.'),
    r.items.map((it) =>
      h('section', { class: 'review-item', 'data-id': it.entry.id },
        h('div', { class: 'side' }, side('Flagged (older)', it.entry), side('Contradicted by (newer)', it.contradictedBy)),
        state.who && state.who.canWrite
          ? h('div', { class: 'actions' },
              h('button', { class: 'keep-newer', onclick: () => resolve(it.entry.id, 'newer') }, 'Keep newer'),
              h('button', { class: 'keep-older secondary', onclick: () => resolve(it.entry.id, 'older') }, 'Keep older'),
              h('button', { class: 'keep-both secondary', onclick: () => resolve(it.entry.id, 'both') }, 'Keep both'))
          : null))
  );
}

// ---- The entity graph: find, a bounded neighbourhood, expand by clicking.
/// A force layout while it stays quick (it grows with the square of the nodes); rings by
/// distance from the entity asked for beyond that (500 nodes: ~9 s with the force layout).
function layoutFor(count) {
  return count <= 120
    ? { name: 'cose', animate: false }
    : { name: 'concentric', animate: false, concentric: (n) => 10 - (n.data('distance') || 0), levelWidth: () => 1, minNodeSpacing: 4 };
}
let cytoscapeLoading = null;
function loadCytoscape() {
  if (window.cytoscape) return Promise.resolve(window.cytoscape);
  if (!cytoscapeLoading)
    cytoscapeLoading = new Promise((ok, fail) => {
      const s = h('script', { src: '/ui/vendor/cytoscape.min.js' });
      s.onload = () => ok(window.cytoscape);
      s.onerror = () => fail(new Error('cannot load the graph library'));
      document.head.append(s);
    });
  return cytoscapeLoading;
}

async function graph(name, params) {
  const q = h('input', { id: 'entity-q', type: 'search', value: name || '', placeholder: 'an entity', required: true });
  const depth = h('select', { id: 'depth' }, [1, 2, 3].map((d) => h('option', { value: d, selected: String(d) === (params.get('depth') || '1') }, d + ' hop' + (d > 1 ? 's' : ''))));
  const edges = h('input', { id: 'edge-types', value: params.get('edge_types') || '', placeholder: 'works_at,uses' });
  const etype = h('input', { id: 'entity-type', value: params.get('entity_type') || '', placeholder: 'person' });
  const matches = h('div', { id: 'matches' });
  const form = h('form', {
    class: 'filters', role: 'search',
    onsubmit: async (ev) => {
      ev.preventDefault();
      const p = new URLSearchParams();
      if (depth.value !== '1') p.set('depth', depth.value);
      if (edges.value) p.set('edge_types', edges.value);
      if (etype.value) p.set('entity_type', etype.value);
      if (params.get('limit')) p.set('limit', params.get('limit'));
      try {
        const exact = await api('/v1/entities?query=' + enc(q.value) + '&limit=10');
        const best = exact.results[0];
        if (best && best.score >= 0.99) {
          location.hash = '#/graph/' + enc(best.name) + (p.toString() ? '?' + p : '');
          return;
        }
        fill(matches, h('p', {}, exact.results.length ? 'Did you mean:' : 'No entity matches.'),
          h('ul', {}, exact.results.map((x) => h('li', {}, h('a', { href: '#/graph/' + enc(x.name) + (p.toString() ? '?' + p : '') }, x.name),
            ' ', h('span', { class: 'tag' }, x.entity_type), ' ' + fmt(x.score)))));
      } catch (e) {
        fill(matches, errorBox(e));
      }
    },
  }, h('label', { for: 'entity-q' }, 'Entity', q), h('label', { for: 'depth' }, 'Depth', depth),
  h('label', { for: 'edge-types' }, 'Edge types', edges), h('label', { for: 'entity-type' }, 'Entity type', etype),
  h('button', { type: 'submit' }, 'Show'));
  const canvas = h('div', { id: 'cy', role: 'img', 'aria-label': 'Graph of the neighbourhood' });
  const panel = h('div', { class: 'panel', id: 'graph-panel' });
  const note = h('p', { class: 'note', id: 'graph-note' });
  show(h('h1', {}, 'Entity graph'), form, matches, note, h('div', { class: 'graph-wrap' }, canvas, panel));
  if (!name) {
    q.focus();
    return;
  }
  // The neighbourhood's size: 200 entities unless the link asks for up to 500.
  const limit = Math.min(500, Math.max(1, parseInt(params.get('limit') || '200', 10) || 200));
  const query = new URLSearchParams({ depth: depth.value, limit: String(limit) });
  const started = performance.now();
  if (edges.value) query.set('edge_types', edges.value);
  if (etype.value) query.set('entity_type', etype.value);
  const nodes = new Map(); // id -> node
  const edgeKeys = new Set();
  let cy = null;
  const fetchAround = async (n) => api('/v1/entities/' + enc(n) + '/neighbourhood?' + query.toString());
  const add = (g) => {
    const added = [];
    for (const n of g.nodes)
      if (!nodes.has(n.id)) {
        nodes.set(n.id, n);
        added.push({ group: 'nodes', data: { id: n.id, label: n.name, type: n.type, distance: n.distance } });
      } else {
        nodes.get(n.id).hidden = Math.min(nodes.get(n.id).hidden, n.hidden);
      }
    for (const e of g.edges) {
      const k = e.from + '|' + e.label + '|' + e.to;
      if (edgeKeys.has(k)) continue;
      edgeKeys.add(k);
      added.push({ group: 'edges', data: { id: k, source: e.from, target: e.to, label: e.label + (e.validTo ? ' (ended ' + day(e.validTo) + ')' : ''), ended: e.validTo ? 1 : 0 } });
    }
    return added;
  };
  const listNodes = () => {
    fill(panel, 
      h('h2', {}, nodes.size + ' entities shown'),
      h('ul', { id: 'node-list' }, [...nodes.values()].sort((a, b) => a.distance - b.distance || a.name.localeCompare(b.name)).map((n) =>
        h('li', {}, h('a', { href: '#/entity/' + enc(n.name), class: 'node-link', 'data-name': n.name }, n.name),
          ' ', h('span', { class: 'tag' }, n.type),
          n.hidden > 0 ? h('button', { class: 'secondary expand', 'data-name': n.name, onclick: () => expand(n.name) }, '+' + n.hidden) : null)))
    );
  };
  const expand = async (n) => {
    try {
      const g = await fetchAround(n);
      const added = add(g);
      if (cy) {
        cy.add(added);
        cy.layout(layoutFor(nodes.size)).run();
      }
      listNodes();
      note.textContent = g.note || '';
    } catch (e) {
      fill(note, errorBox(e));
    }
  };
  let first;
  try {
    first = await fetchAround(name);
  } catch (e) {
    return fill(panel, errorBox(e));
  }
  const elements = add(first);
  note.textContent = (first.note || '') + (first.filteredByType ? ' ' + first.filteredByType + ' entities of other types left out.' : '');
  listNodes();
  try {
    const cytoscape = await loadCytoscape();
    cy = cytoscape({
      container: canvas,
      elements,
      layout: layoutFor(nodes.size),
      style: [
        { selector: 'node', style: { label: 'data(label)', 'font-size': 10, 'min-zoomed-font-size': 7, 'background-color': '#1f5fbf', width: 14, height: 14 } },
        { selector: 'node[type = "person"]', style: { 'background-color': '#1e7b34' } },
        { selector: 'edge', style: { label: 'data(label)', 'font-size': 8, width: 1, 'curve-style': 'bezier', 'target-arrow-shape': 'triangle', 'line-color': '#9aa4b5', 'target-arrow-color': '#9aa4b5' } },
        { selector: 'edge[ended = 1]', style: { 'line-style': 'dashed' } },
      ],
    });
    cy.on('tap', 'node', (ev) => expand(ev.target.data('label')));
    cy.on('dbltap', 'node', (ev) => { location.hash = '#/entity/' + enc(ev.target.data('label')); });
    // What tools/bench/console.sh reads: the first neighbourhood laid out and painted, in ms
    // from the page asking for it (two frames: the one cytoscape draws in, and the paint).
    await new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)));
    window.engramGraphDrawnMs = performance.now() - started;
    window.engramGraph = cy;
  } catch (e) {
    fill(canvas, errorBox(e));
  }
}

async function entity(name) {
  try {
    const e = await api('/v1/entities/' + enc(name));
    show(h('h1', {}, e.name),
      h('p', {}, h('span', { class: 'tag' }, e.type), ' ' + e.edges + ' relations · ', h('a', { href: '#/graph/' + enc(e.name) }, 'show in the graph')),
      h('h2', {}, 'Attributes'), Object.keys(e.attributes).length ? fields(e.attributes, Object.keys(e.attributes)) : h('p', { class: 'meta' }, 'None.'),
      h('h2', {}, 'Aliases'), e.aliases.length ? h('p', {}, e.aliases.map((a) => h('span', { class: 'tag' }, a))) : h('p', { class: 'meta' }, 'None.'),
      h('h2', {}, 'Observations'), e.observations.length ? h('ul', {}, e.observations.map((o) => h('li', {}, o))) : h('p', { class: 'meta' }, 'None.'),
      e.resolved.length ? [h('h2', {}, 'Mentions joined to it'), h('ul', {}, e.resolved.map((r) => h('li', {}, '"' + r.mention + '" (' + r.reason + ') in ', h('a', { href: '#/message/' + enc(r.eventId) }, r.eventId))))] : null,
      h('h2', {}, 'Entries that mention it'),
      e.entries.length ? h('ul', {}, e.entries.map((x) => h('li', {}, h('a', { href: '#/entry/' + enc(x.id) }, x.title), ' ', h('span', { class: 'tag' }, x.entryType), x.status !== 'active' ? ' ' + x.status : ''))) : h('p', { class: 'meta' }, 'None.'));
  } catch (err) {
    show(h('h1', {}, 'Entity'), errorBox(err));
  }
}

async function documents() {
  try {
    const r = await api('/v1/documents');
    show(h('h1', {}, 'Documents'),
      r.documents.length
        ? h('table', {}, h('thead', {}, h('tr', {}, ['document', 'chunks', 'done', 'pending', 'failed', 'entries', 'entities', 'relations'].map((x, i) => h('th', { class: i ? 'num' : '' }, x)))),
            h('tbody', {}, r.documents.map((d) => [
              h('tr', {}, h('td', {}, d.title || d.id), [d.chunks, d.done, d.pending, d.failed, d.entries, d.entities, d.relations].map((x) => h('td', { class: 'num' }, x))),
              d.error ? h('tr', {}, h('td', { colspan: 8, class: 'error' }, 'failed: ' + d.error)) : null])))
        : h('p', {}, 'No documents yet (engramctl ingest-docs).'));
  } catch (e) {
    show(h('h1', {}, 'Documents'), errorBox(e));
  }
}

async function bundles() {
  try {
    const r = await api('/v1/bundles');
    const list = r.bundles || [];
    show(h('h1', {}, 'Bundles'),
      list.length
        ? list.map((b) => h('section', { class: 'bundle' }, h('h2', {}, b.name + ' ', h('span', { class: 'tag' }, 'version ' + (b.version ?? ''))),
            h('p', {}, b.description || ''),
            h('p', { class: 'meta' }, 'applied ' + (b.appliedAt || '?') + (b.lastApply ? ' · last apply: ' + b.lastApply.state + (b.lastApply.error ? ' (' + b.lastApply.error + ')' : '') : '')),
            h('table', {}, h('thead', {}, h('tr', {}, h('th', {}, 'type'), h('th', { class: 'num' }, 'entities'), h('th', {}, 'id field'), h('th', { class: 'hide-narrow' }, 'tools'))),
              h('tbody', {}, (b.types || []).map((t) => h('tr', {}, h('td', {}, t.name), h('td', { class: 'num' }, t.entities),
                h('td', {}, t.idField || ''), h('td', { class: 'hide-narrow' }, (t.tools || []).join(', '))))))))
        : h('p', {}, 'No bundles (engramctl kg apply).'),
      h('h2', {}, 'Tools this token gets from them'),
      r.tools.length ? h('ul', {}, r.tools.map((t) => h('li', {}, t.name + ' (' + t.bundle + ', ' + t.scope + ')'))) : h('p', { class: 'meta' }, 'None.'));
  } catch (e) {
    show(h('h1', {}, 'Bundles'), errorBox(e));
  }
}

async function actions() {
  try {
    const r = await api('/v1/action-items?limit=200');
    show(h('h1', {}, 'Action items'),
      h('p', { class: 'meta' }, r.total + ' open'),
      r.items.length
        ? h('table', {}, h('thead', {}, h('tr', {}, h('th', {}, 'due'), h('th', {}, 'action item'), h('th', { class: 'hide-narrow' }, 'reminder sent'))),
            h('tbody', {}, r.items.map((e) => h('tr', {}, h('td', {}, day(e.dueAt) || '—'),
              h('td', {}, h('a', { href: '#/entry/' + enc(e.id) }, e.title)), h('td', { class: 'hide-narrow' }, e.reminderSentAt || '')))))
        : h('p', {}, 'No open action items.'));
  } catch (e) {
    show(h('h1', {}, 'Action items'), errorBox(e));
  }
}

// ---- Routing.
async function route() {
  if (state.timer) {
    clearInterval(state.timer);
    state.timer = null;
  }
  if (state.stream) {
    state.stream.abort();
    state.stream = null;
  }
  const hash = location.hash.replace(/^#\/?/, '');
  const [pathPart, queryPart] = hash.split('?');
  const parts = pathPart.split('/').map(decodeURIComponent);
  const params = new URLSearchParams(queryPart || '');
  if (parts[0] === 'login' || !state.token) {
    if (parts[0] && parts[0] !== 'login') sessionStorage.setItem('engram.next', location.hash);
    return renderLogin();
  }
  if (!state.who) {
    try {
      state.who = await api('/v1/whoami');
    } catch (e) {
      return logout(e instanceof ApiError && e.status === 401 ? 'That token is no longer accepted.' : e.message);
    }
  }
  document.getElementById('nav').hidden = false;
  fill(document.getElementById('who'),
    state.who.organizationId + ' · ' + (state.who.canWrite ? 'read and write' : 'read only') + ' · ',
    h('a', { href: '#/login', onclick: (ev) => { ev.preventDefault(); logout(); } }, 'log out'));
  for (const a of document.querySelectorAll('nav a'))
    if (a.getAttribute('href') === '#/' + parts[0]) a.classList.add('here'), a.setAttribute('aria-current', 'page');
    else a.classList.remove('here'), a.removeAttribute('aria-current');
  const pages = {
    overview: () => overview(),
    search: () => search(params),
    entry: () => entry(parts[1] || ''),
    message: () => message(parts[1] || ''),
    review: () => review(),
    graph: () => graph(parts[1] || '', params),
    entity: () => entity(parts[1] || ''),
    documents: () => documents(),
    bundles: () => bundles(),
    actions: () => actions(),
  };
  const page = pages[parts[0]] || pages.overview;
  await page();
  document.title = 'Engram · ' + (parts[0] || 'overview');
  document.body.dataset.page = parts[0] || 'overview';
  document.body.dataset.ready = String(Date.now());
}

window.addEventListener('hashchange', route);
window.addEventListener('DOMContentLoaded', route);
