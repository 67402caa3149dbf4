// The web console end to end, in Debian's headless chromium driven by puppeteer-core:
//   node tests/console/console_test.mjs BASE_URL WRITE_TOKEN WRITE_TOKEN_2 READ_TOKEN OTHER_ORG_TOKEN SHOTS_DIR
// (ENGRAM_NODE_MODULES: where tools/dev.sh setup installed tests/mcp/package.json; Node 22.)
// engramd runs with the demo stream applied; WRITE, WRITE_2 (another agent: its saves can
// contradict the first's) and READ are tokens of organisation acme, OTHER one of northwind. Every wait is for something the page shows, never for a time.
// Prints one JSON line {failures, checks, screenshots, firstLoadBytes}; exits 1 on a failure.
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import fs from 'node:fs';

const [base, writeToken, secondWriter, readToken, otherToken, shots] = process.argv.slice(2);
const modules = process.env.ENGRAM_NODE_MODULES;
const { default: puppeteer } = await import(
  pathToFileURL(path.join(modules, 'puppeteer-core/lib/puppeteer/puppeteer-core.js')).href);

const failures = [];
let checks = 0;
const check = (ok, what) => {
  ++checks;
  if (!ok) failures.push(what);
};
const screenshots = [];
fs.mkdirSync(shots, { recursive: true });

// ---- The API and MCP from outside the browser (what a script would see).
async function api(token, p, opts = {}) {
  const r = await fetch(base + p, {
    method: opts.method || 'GET',
    headers: { ...(token ? { Authorization: 'Bearer ' + token } : {}), ...(opts.body ? { 'Content-Type': 'application/json' } : {}) },
    body: opts.body ? JSON.stringify(opts.body) : undefined,
  });
  let body = null;
  try { body = await r.json(); } catch { body = null; }
  return { status: r.status, body };
}
async function tool(token, name, args) {
  const r = await fetch(base + '/mcp', {
    method: 'POST',
    headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const j = await r.json();
  if (!j.result || j.result.isError) throw new Error(name + ' failed: ' + JSON.stringify(j));
  return j.result.structuredContent;
}
const save = (token, text) => tool(token, 'save_knowledge', { type: 'fact', title: text, content: text, confidence: 0.8 });

const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
const timeout = 30000;

async function open(context) {
  const page = await context.newPage();
  page.setDefaultTimeout(timeout);
  await page.setViewport({ width: 1280, height: 800 });
  page.on('pageerror', (e) => failures.push('page error: ' + e.message));
  return page;
}
async function shot(page, name) {
  const file = path.join(shots, name + '.png');
  await page.screenshot({ path: file });
  screenshots.push(file);
}
/// Goes to a console URL and waits until that page has rendered.
async function visit(page, hash) {
  const before = await page.evaluate(() => document.body.dataset.ready || '');
  await page.evaluate((h) => { location.hash = h; }, hash);
  await page.waitForFunction((b) => (document.body.dataset.ready || '') !== b, {}, before);
}
const text = (page, sel) => page.$eval(sel, (e) => e.textContent);
async function login(page, token) {
  await page.waitForSelector('#token');
  await page.type('#token', token);
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.body.dataset.page !== 'login' && document.body.dataset.ready);
}

let firstLoadBytes = 0;
let counting = true;
try {
  // ---- A bad token is refused with a message; then a whole task by keyboard alone.
  const ctx = await browser.createBrowserContext();
  const page = await open(ctx);
  page.on('response', async (r) => {
    const u = r.url();
    if (counting && u.includes('/ui/') && r.status() === 200) firstLoadBytes += (await r.buffer()).length;
  });
  await page.goto(base + '/ui/');
  await page.waitForSelector('#token');
  await page.keyboard.type('not-a-token');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => (document.querySelector('#login-message') || {}).textContent?.includes('not accepted'));
  check(true, 'a bad token is refused');
  await shot(page, 'login-refused');
  // Keyboard only: the token field has the focus; select what is there, type, Enter.
  await page.keyboard.down('Control');
  await page.keyboard.press('KeyA');
  await page.keyboard.up('Control');
  await page.keyboard.type(writeToken);
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.body.dataset.page === 'overview' && document.querySelector('.org h2'));
  counting = false;  // the page, its script and style: what a first visit loads
  const focusBy = async (predicate, what) => {
    for (let i = 0; i < 40; ++i) {
      await page.keyboard.press('Tab');
      if (await page.evaluate(predicate)) return true;
    }
    failures.push('keyboard: cannot reach ' + what);
    return false;
  };
  if (await focusBy(() => document.activeElement?.getAttribute('href') === '#/search', 'the Search link')) {
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.activeElement?.id === 'q');
    await page.keyboard.type('pilot proposal seats');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.result-link');
    if (await focusBy(() => document.activeElement?.classList.contains('result-link'), 'the first result')) {
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => document.body.dataset.page === 'entry');
      check((await text(page, 'h1')).length > 0, 'keyboard: an entry opened from search');
    }
  }

  // ---- Overview: the organisation's counts and the log's partitions.
  await visit(page, '#/overview');
  await page.waitForSelector('.org h2');
  const orgs = await page.$$eval('.org h2', (hs) => hs.map((x) => x.textContent));
  check(orgs.length === 1 && orgs[0] === 'acme', 'overview shows the token\'s organisation only: ' + orgs);
  check((await page.$$('table tbody tr')).length >= 1, 'overview lists the log partitions');
  await shot(page, 'overview');
  // Live: /v1/events says "applied" when a save of acme is applied, and the open overview
  // shows the new count without a reload.
  const entriesShown = () => page.$eval('.org .card[data-label="entries"] b', (b) => b.textContent);
  const shownBefore = await entriesShown();
  const stream = new AbortController();
  const events = await fetch(base + '/v1/events', { headers: { Authorization: 'Bearer ' + writeToken }, signal: stream.signal });
  check(events.status === 200 && events.headers.get('content-type').startsWith('text/event-stream'), '/v1/events is an event stream');
  const heard = (async () => {
    const reader = events.body.getReader();
    let text = '';
    while (!text.includes('"applied"')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    return text;
  })();
  await save(writeToken, 'The live overview counts this entry once it is applied.');
  check((await heard).includes('"applied"'), '/v1/events says applied after a save');
  stream.abort();
  await page.waitForFunction((b) => document.querySelector('.org .card[data-label="entries"] b')?.textContent !== b, {}, shownBefore);
  check(Number(await entriesShown()) === Number(shownBefore) + 1, 'the overview shows the new entry without a reload');

  // ---- Search finds a known entry; open it; follow its source.
  await visit(page, '#/search?q=' + encodeURIComponent('pilot proposal seats'));
  await page.waitForSelector('.result');
  const results = await page.$$eval('.result', (rs) => rs.map((r) => r.textContent));
  check(results.some((r) => r.includes('50 seats')), 'search finds the pilot proposal');
  check(results.every((r) => r.includes('score')), 'each result shows its score');
  await shot(page, 'search');
  const entryHref = await page.$$eval('.result', (rs) => {
    const r = rs.find((x) => x.textContent.includes('50 seats') && x.querySelector('.result-link'));
    return r ? r.querySelector('.result-link').getAttribute('href') : '';
  });
  check(entryHref.startsWith('#/entry/'), 'the result links to its entry');
  const entryId = decodeURIComponent(entryHref.slice('#/entry/'.length));
  await visit(page, entryHref);
  check((await page.$('mark')) !== null, 'the entry\'s sentence is highlighted in its source');
  check((await page.$('#approve')) !== null, 'a write token sees Approve');
  await shot(page, 'entry');
  const before = (await api(writeToken, '/v1/entries/' + encodeURIComponent(entryId))).body.entry.confidence;
  await page.click('#approve');
  await page.waitForFunction(() => (document.querySelector('#validate-message') || {}).textContent?.startsWith('approved'));
  const after = (await api(writeToken, '/v1/entries/' + encodeURIComponent(entryId))).body.entry.confidence;
  check(after > before, `approving raised the confidence (${before} -> ${after})`);
  check((await text(page, '#confidence')).startsWith(after.toFixed(2)), 'the page shows the new confidence');
  const sourceHref = await page.$eval('a[href^="#/message/"]', (a) => a.getAttribute('href'));
  await visit(page, sourceHref);
  check((await text(page, 'pre.source')).includes('pilot proposal'), 'the source message opens');
  await shot(page, 'message');

  // ---- An entry saved twenty times: its record keeps 16 sources; the page loads the 4 between.
  const repeated = 'Acme keeps its archive in the Frankfurt data centre.';
  const saves = [];
  for (let n = 0; n < 20; ++n) saves.push(await save(writeToken, repeated));
  check(saves.every((s) => s.id === saves[0].id) && saves.slice(1).every((s) => s.outcome === 'merged'),
    'twenty saves of one statement merge into one entry');
  await visit(page, '#/entry/' + encodeURIComponent(saves[0].id));
  check((await text(page, '.moved-sources')).startsWith('4 more source(s)'), 'the entry page counts the sources not shown');
  check((await page.$$('li.source')).length === 16, 'the entry page lists the 16 its record keeps');
  await page.click('.show-sources');
  await page.waitForFunction(() => document.querySelectorAll('li.source').length === 20 && !document.querySelector('.moved-sources'));
  const shown = await page.$$eval('li.source a', (as) => as.map((a) => a.textContent));
  const listed = (await api(readToken, '/v1/entries/' + encodeURIComponent(saves[0].id) + '/sources')).body;
  check(listed.total === 20 && JSON.stringify(shown) === JSON.stringify(listed.sources.map((s) => s.eventId)),
    'the page then lists all 20, in the order /sources gives');

  // ---- Review: a contradiction two agents saved; keep the newer; the queue and the store agree.
  const older = await save(writeToken, 'The per-unit price for Initrode is $42.');
  const newer = await save(secondWriter, 'The per-unit price for Initrode is $45.');
  check(newer.contradictions?.includes(older.id), 'the second save contradicts the first');
  await visit(page, '#/review');
  await page.waitForSelector(`.review-item[data-id="${older.id}"] .keep-newer`);
  await shot(page, 'review');
  await page.click(`.review-item[data-id="${older.id}"] .keep-newer`);
  await page.waitForFunction((id) => !document.querySelector(`.review-item[data-id="${id}"]`) &&
    (document.querySelector('#review-message') || {}).textContent?.startsWith('Resolved'), {}, older.id);
  const queue = await tool(writeToken, 'list_review_queue', {});
  check(!queue.items.some((i) => i.entry.id === older.id), 'the MCP review queue no longer holds it');
  const olderNow = await api(writeToken, '/v1/entries/' + encodeURIComponent(older.id));
  check(olderNow.body.entry.status === 'superseded', 'keeping the newer supersedes the older: ' + olderNow.body.entry.status);

  // ---- Entity graph: a known neighbour, expand by clicking, a node's page.
  await visit(page, '#/graph/Globex');
  await page.waitForSelector('#node-list li');
  await page.waitForFunction(() => window.engramGraph && window.engramGraph.nodes().length > 1);
  const names = await page.$$eval('#node-list .node-link', (as) => as.map((a) => a.textContent));
  check(names.includes('Dana Whitfield'), 'Globex\'s neighbourhood holds Dana Whitfield: ' + names.join(', '));
  await shot(page, 'graph');
  const expandable = await page.$$eval('#node-list .expand', (bs) => bs.map((b) => b.dataset.name).filter((n) => n !== 'Globex'));
  if (expandable.length) {
    const count = names.length;
    await page.click(`#node-list .expand[data-name="${expandable[0]}"]`);
    await page.waitForFunction((n) => document.querySelectorAll('#node-list li').length > n, {}, count);
    const drawn = await page.evaluate(() => window.engramGraph.nodes().length);
    const listed = await page.$$eval('#node-list li', (l) => l.length);
    check(drawn === listed, `expanding draws what it lists (${drawn} drawn, ${listed} listed)`);
  } else {
    failures.push('no neighbour of Globex can be expanded');
  }
  await visit(page, '#/entity/Globex');
  check((await page.$$eval('main li a[href^="#/entry/"]', (a) => a.length)) > 0, 'the entity page lists entries that mention it');
  check((await page.content()).includes('Globex GmbH'), 'the entity page shows its aliases');
  await shot(page, 'entity');

  // ---- The graph's filters: only people around Globex, and what was left out is said.
  await visit(page, '#/graph/Globex?entity_type=person');
  await page.waitForSelector('#node-list li');
  const people = await page.$$eval('#node-list .tag', (t) => t.map((x) => x.textContent));
  check(people.filter((t) => t !== 'organization').every((t) => t === 'person'), 'the type filter keeps people: ' + people);
  check((await text(page, '#graph-note')).includes('left out'), 'the graph says what the filter left out');

  // ---- Documents (the one ingested, its chunks), bundles (the one applied, its tools), action items.
  for (const [hash, name, expect, holds] of [['#/documents', 'documents', 'Documents', 'Vendor review 2026'],
    ['#/bundles', 'bundles', 'Bundles', 'ecommerce-catalog-example'], ['#/actions', 'actions', 'Action items', 'open']]) {
    await visit(page, hash);
    check((await text(page, 'h1')) === expect, name + ' page opens');
    check((await page.$('.error')) === null, name + ' page shows no error');
    check((await text(page, 'main')).includes(holds), name + ' page shows ' + holds);
    await shot(page, name);
  }
  check((await page.$$('main tbody tr')).length > 0, 'the action items page lists the open ones');
  const bundleTools = await api(writeToken, '/v1/bundles');
  check(bundleTools.body.tools.length > 0 && bundleTools.body.tools.every((t) => t.bundle === 'ecommerce-catalog-example'),
    'the bundles page lists the tools the bundle gives this token');

  // ---- 400 px wide.
  await page.setViewport({ width: 400, height: 800 });
  for (const [hash, name] of [['#/overview', 'overview-narrow'], [entryHref, 'entry-narrow']]) {
    await visit(page, hash);
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    check(wide <= 400, name + ': no horizontal scrolling at 400 px (' + wide + ')');
    await shot(page, name);
  }
  await ctx.close();

  // ---- A read-only token: no button that changes anything, and 403 from the API.
  const second = await save(writeToken, 'The per-unit price for Initrode is $48.');
  check(second.contradictions?.length > 0, 'a second contradiction waits for review');
  const rctx = await browser.createBrowserContext();
  const reader = await open(rctx);
  await reader.goto(base + '/ui/#/review');  // a shared link: after the login, that page
  await login(reader, readToken);
  check(await reader.evaluate(() => document.body.dataset.page === 'review'), 'a link opened before the login opens after it');
  await reader.waitForSelector('.review-item');
  check((await reader.$$('.review-item button')).length === 0, 'a read token sees no resolve buttons');
  await visit(reader, entryHref);
  check((await reader.$('#approve')) === null, 'a read token sees no Approve');
  const v = await api(readToken, '/v1/entries/' + encodeURIComponent(entryId) + '/validate', { method: 'POST', body: { outcome: 'approved' } });
  check(v.status === 403, 'validate with a read token: 403, not ' + v.status);
  const rr = await api(readToken, '/v1/review/' + encodeURIComponent(newer.id) + '/resolve', { method: 'POST', body: { keep: 'both' } });
  check(rr.status === 403, 'resolve with a read token: 403, not ' + rr.status);
  await rctx.close();

  // ---- Another organisation's token sees nothing of acme, in pages and API.
  const octx = await browser.createBrowserContext();
  const other = await open(octx);
  await other.goto(base + '/ui/');
  await login(other, otherToken);
  const otherOrgs = await other.$$eval('.org h2', (hs) => hs.map((x) => x.textContent));
  check(!otherOrgs.includes('acme'), 'another organisation\'s overview has no acme: ' + otherOrgs);
  await visit(other, entryHref);
  check((await text(other, 'main')).includes('no entry'), 'another organisation cannot open acme\'s entry');
  const cross = await api(otherToken, '/v1/entries/' + encodeURIComponent(entryId));
  check(cross.status === 404, 'API: another organisation\'s entry is 404, not ' + cross.status);
  const rec = await api(otherToken, '/v1/recall?query=' + encodeURIComponent('pilot proposal seats'));
  check(rec.status === 200 && !rec.body.results.some((x) => x.id === entryId), 'API: recall does not reach acme');
  const ent = await api(otherToken, '/v1/entities/Dana%20Whitfield');
  check(ent.status === 404, 'API: acme\'s people are not found from northwind: ' + ent.status);
  await octx.close();

  const bad = await api('not-a-token', '/v1/whoami');
  check(bad.status === 401, 'API: a bad token is 401, not ' + bad.status);
  const none = await api('', '/v1/stats');
  check(none.status === 401, 'API: /v1/stats without a token is 401, not ' + none.status);
} catch (e) {
  failures.push('stopped: ' + (e && e.stack ? e.stack : e));
  for (const [i, p] of (await Promise.all((await browser.browserContexts()).map((c) => c.pages()))).flat().entries())
    await p.screenshot({ path: path.join(shots, 'failed-' + i + '.png') }).catch(() => {});
} finally {
  await browser.close();
}

console.log(JSON.stringify({ failures, checks, screenshots, firstLoadBytes }));
process.exit(failures.length ? 1 : 0);
