// @ts-check
// The key holder's dashboard at /dashboard: asks for a key, then shows what the 0-credit endpoints /v1/account,
// /v1/account/usage and /v1/account/requests answer for it; rolls or revokes that key (POST /v1/account/roll,
// /v1/account/revoke), and gives a visitor a free key (POST /v1/account/free-key). Served as a static file under a CSP without inline code
// (api/routes/account/dashboard.ts); type-checked with the DOM library (tsconfig.json here). Never innerHTML: every
// text reaches the DOM through textContent or setAttribute.
'use strict';
(function () {
  var SVG = 'http://www.w3.org/2000/svg';
  var STORAGE = 'foncier-dashboard-key';
  var SERIES = 5;

  /** @param {string} id */
  function byId(id) {
    var el = document.getElementById(id);
    if (!el) throw new Error('missing #' + id);
    return el;
  }

  /**
   * @param {string} tag
   * @param {Record<string, string | number> | null} attrs
   * @param {...(Node | string | number)} children
   */
  function h(tag, attrs, ...children) {
    var el = document.createElement(tag);
    Object.entries(attrs || {}).forEach(function (kv) { el.setAttribute(kv[0], String(kv[1])); });
    children.forEach(function (c) { el.append(c instanceof Node ? c : String(c)); });
    return el;
  }

  /**
   * @param {string} tag
   * @param {Record<string, string | number>} attrs
   */
  function s(tag, attrs) {
    var el = document.createElementNS(SVG, tag);
    Object.entries(attrs).forEach(function (kv) { el.setAttribute(kv[0], String(kv[1])); });
    return el;
  }

  var fmt = new Intl.NumberFormat('en-US');

  /**
   * @param {string} path
   * @param {string} key
   * @returns {Promise<any>}
   */
  async function get(path, key) {
    var res = await fetch(path, { headers: { 'X-API-Key': key } });
    var body = await res.json().catch(function () { return null; });
    if (!res.ok) throw new Error(body && body.error ? body.error.code + ': ' + body.error.message : 'HTTP ' + res.status);
    return body;
  }

  /** @param {any} a */
  function renderAccount(a) {
    var figures = byId('figures');
    figures.replaceChildren();
    /** @type {Array<[string, string, string]>} */
    var items = [
      ['plan', 'Plan', a.key.plan],
      ['remaining', 'Credits left', fmt.format(a.credits.remaining)],
      ['monthly', 'Monthly allotment left', fmt.format(a.credits.monthly_remaining) + ' / ' + fmt.format(a.credits.monthly_allotment)],
      ['topup', 'Top-up credits', fmt.format(a.credits.topup)],
      ['resets', 'Allotment resets on', a.credits.resets_on],
      ['rate', 'Requests per minute', fmt.format(a.rate_limit_per_minute)],
      ['key', 'Key', a.key.prefix + '… ' + (a.key.label ? '(' + a.key.label + ')' : '')],
    ];
    items.forEach(function (it) {
      figures.append(h('div', { 'data-figure': it[0] }, h('dt', null, it[1]), h('dd', null, it[2])));
    });
    byId('account').hidden = false;
  }

  /**
   * Every day from `from` to `to` (YYYY-MM-DD, UTC), both included.
   * @param {string} from
   * @param {string} to
   */
  function daysBetween(from, to) {
    var out = [];
    for (var t = Date.parse(from + 'T00:00:00Z'); t <= Date.parse(to + 'T00:00:00Z'); t += 86400000) out.push(new Date(t).toISOString().slice(0, 10));
    return out;
  }

  /** @param {any} u */
  function renderUsage(u) {
    /** @type {Array<{endpoint: string, requests: number, credits: number}>} */
    var totals = u.totals;
    var metric = totals.some(function (t) { return t.credits > 0; }) ? 'credits' : 'requests';
    // The endpoints that weigh most get a colour each; the rest share one.
    var named = totals.slice(0, SERIES).map(function (t) { return t.endpoint; });
    /** @param {string} e */
    function seriesOf(e) { var i = named.indexOf(e); return i >= 0 ? i : SERIES; }
    var days = daysBetween(u.date_debut, u.date_fin);
    /** @type {Map<string, number[]>} */
    var stacks = new Map(days.map(function (d) { return [d, new Array(SERIES + 1).fill(0)]; }));
    /** @type {Array<{date: string, endpoint: string, requests: number, credits: number}>} */
    var usage = u.usage;
    usage.forEach(function (r) {
      var st = stacks.get(r.date);
      if (st) st[seriesOf(r.endpoint)] += metric === 'credits' ? r.credits : r.requests;
    });
    var max = Math.max(1, ...Array.from(stacks.values(), function (st) { return st.reduce(function (a, b) { return a + b; }, 0); }));
    var W = 900, H = 240, left = 48, bottom = 28, top = 10, plotH = H - bottom - top, bw = (W - left - 8) / days.length;
    var svg = s('svg', { viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': metric + ' per day', 'data-metric': metric });
    [0, 0.5, 1].forEach(function (f) {
      var y = top + plotH * (1 - f);
      svg.append(s('line', { class: 'grid', x1: left, x2: W - 8, y1: y, y2: y }));
      var label = s('text', { class: 'axis', x: left - 6, y: y + 3, 'text-anchor': 'end' });
      label.textContent = fmt.format(Math.round(max * f));
      svg.append(label);
    });
    days.forEach(function (d, i) {
      var x = left + i * bw + 1, y = top + plotH;
      (stacks.get(d) || []).forEach(function (v, k) {
        if (!v) return;
        var hgt = (v / max) * plotH;
        y -= hgt;
        var rect = s('rect', { class: 's' + k, x: x, y: y, width: Math.max(1, bw - 2), height: hgt, 'data-date': d, 'data-series': k < SERIES ? named[k] : 'other', 'data-value': v });
        var title = s('title', {});
        title.textContent = d + ' · ' + (k < SERIES ? named[k] : 'other endpoints') + ': ' + fmt.format(v) + ' ' + metric;
        rect.append(title);
        svg.append(rect);
      });
      if (i % 5 === 0 || i === days.length - 1) {
        var t = s('text', { class: 'axis', x: x + bw / 2, y: H - 10, 'text-anchor': 'middle' });
        t.textContent = d.slice(5);
        svg.append(t);
      }
    });
    var legend = h('ul', { class: 'legend' });
    named.concat(totals.length > SERIES ? ['other endpoints'] : []).forEach(function (e, k) {
      legend.append(h('li', null, h('span', { class: 'swatch s' + k }), e));
    });
    byId('chart').replaceChildren(svg, legend);
    var body = /** @type {HTMLTableElement} */ (byId('totals')).tBodies[0];
    body.replaceChildren(...totals.map(function (t) {
      return h('tr', { 'data-endpoint': t.endpoint }, h('td', null, h('code', null, t.endpoint)), h('td', { class: 'num' }, fmt.format(t.requests)), h('td', { class: 'num' }, fmt.format(t.credits)));
    }));
    if (!totals.length) body.append(h('tr', null, h('td', { colspan: 3, class: 'muted' }, 'No request in the period.')));
    byId('usage').hidden = false;
  }

  /** @param {any} r */
  function renderRequests(r) {
    /** @type {Array<{request_id: string, at: string, endpoint: string, transport: string, status: number, credits: number}>} */
    var list = r.requests;
    var body = /** @type {HTMLTableElement} */ (byId('requests')).tBodies[0];
    body.replaceChildren(...list.map(function (q) {
      return h('tr', { 'data-request-id': q.request_id },
        h('td', null, q.at.slice(0, 19).replace('T', ' ')), h('td', null, h('code', null, q.request_id)), h('td', null, h('code', null, q.endpoint)),
        h('td', null, q.transport), h('td', { class: 'num' + (q.status >= 400 ? ' error' : '') }, q.status), h('td', { class: 'num' }, q.credits));
    }));
    if (!list.length) body.append(h('tr', null, h('td', { colspan: 6, class: 'muted' }, 'No request yet.')));
    byId('recent').hidden = false;
  }

  // Plans that may hold alerts (GET /v1/alerts answers 403 plan_required to the others; asking would only log an error).
  var ALERT_PLANS = ['Scale', 'Enterprise'];
  /** @type {Promise<Set<string>> | undefined} */
  var documented;
  /** The operations this server has, from its OpenAPI document ("GET /v1/portfolio"): panels for the others stay hidden. */
  function operations() {
    documented = documented || fetch('/v1/openapi.json').then(function (r) { return r.json(); }).then(function (doc) {
      var out = new Set();
      Object.entries(doc.paths || {}).forEach(function (kv) { Object.keys(/** @type {object} */ (kv[1])).forEach(function (m) { out.add(m.toUpperCase() + ' ' + kv[0]); }); });
      return out;
    });
    return documented;
  }

  /**
   * A 0-credit list of the key's own objects; the error's message when refused.
   * @param {string} path
   * @param {string} key
   * @returns {Promise<{ body?: any, error?: string }>}
   */
  async function optional(path, key) {
    var res = await fetch(path, { headers: { 'X-API-Key': key } });
    var body = await res.json().catch(function () { return null; });
    if (!res.ok) return { error: body && body.error ? body.error.message : 'HTTP ' + res.status };
    return { body: body };
  }

  /** @param {number | null | undefined} v */
  function num(v) { return v === null || v === undefined ? '—' : fmt.format(v); }

  /** @param {string} key */
  async function renderPortfolio(key) {
    var section = byId('portfolio');
    section.hidden = !(await operations()).has('GET /v1/portfolio');
    if (section.hidden) return;
    var r = await optional('/v1/portfolio?limit=100', key);
    var body = /** @type {HTMLTableElement} */ (byId('properties')).tBodies[0];
    /** @type {any[]} */
    var props = r.body ? r.body.properties : [];
    byId('portfolio-note').textContent = r.error || (props.length ? 'Cached estimates, as the last call computed them (no credit is spent here).' : 'No property yet.');
    body.replaceChildren(...props.map(function (p) {
      return h('tr', { 'data-property-id': p.id },
        h('td', null, p.label || p.address || p.id), h('td', null, p.type_local), h('td', { class: 'num' }, num(p.surface)),
        h('td', { class: 'num' }, p.estimate_mid === undefined ? 'not estimated' : p.estimate_mid === null ? '—' : num(p.estimate_low) + ' – ' + num(p.estimate_high)),
        h('td', { class: 'num' }, num(p.estimate_pm2)), h('td', null, p.estimate_confidence || '—'),
        h('td', null, p.estimate_computed_at ? String(p.estimate_computed_at).slice(0, 10) : '—'));
    }));
  }

  /**
   * @param {string} key
   * @param {string} plan
   */
  async function renderAlerts(key, plan) {
    var section = byId('alerts');
    section.hidden = !(await operations()).has('GET /v1/alerts');
    if (section.hidden) return;
    var body = /** @type {HTMLTableElement} */ (byId('alert-list')).tBodies[0];
    if (ALERT_PLANS.indexOf(plan) < 0) {
      byId('alerts-note').textContent = 'Alerts come with the ' + ALERT_PLANS.join(' and ') + ' plans.';
      body.replaceChildren();
      return;
    }
    var r = await optional('/v1/alerts?limit=50', key);
    /** @type {any[]} */
    var alerts = r.body ? r.body.alerts : [];
    byId('alerts-note').textContent = r.error || (alerts.length ? '' : 'No alert yet.');
    var rows = await Promise.all(alerts.map(async function (a) {
      var d = await optional('/v1/alerts/' + encodeURIComponent(a.id) + '/deliveries?limit=5', key);
      /** @type {any[]} */
      var deliveries = d.body ? d.body.deliveries : [];
      var filters = ['code_postal', 'commune', 'code_departement', 'type_local', 'prix_min', 'prix_max', 'surface_min', 'surface_max']
        .filter(function (f) { return a[f] !== null && a[f] !== undefined; })
        .map(function (f) { return f + '=' + a[f]; }).join(', ');
      return h('tr', { 'data-alert-id': a.id },
        h('td', null, a.label || a.id), h('td', null, h('code', null, filters)),
        h('td', null, a.is_active ? 'active' : 'inactive' + (a.deactivated_reason ? ' (' + a.deactivated_reason + ')' : '')),
        h('td', null, deliveries.length ? deliveries.map(function (x) { return x.created_at.slice(0, 10) + ' ' + x.status + (x.response_status ? ' (' + x.response_status + ')' : ''); }).join('; ') : 'none'));
    }));
    body.replaceChildren(...rows);
  }

  // ---- Keys: roll and revoke the signed-in key, a free key for a visitor ----------------------------------------------

  /** @type {{ key: string, id: string, prefix: string } | null} */
  var signedIn = null;

  /**
   * A 0-credit POST; the API's error code and message when refused.
   * @param {string} path
   * @param {any} body
   * @param {string} [key]
   * @returns {Promise<any>}
   */
  async function post(path, body, key) {
    /** @type {Record<string, string>} */
    var headers = { 'Content-Type': 'application/json' };
    if (key) headers['X-API-Key'] = key;
    var res = await fetch(path, { method: 'POST', headers: headers, body: JSON.stringify(body) });
    var out = await res.json().catch(function () { return null; });
    if (!res.ok) throw new Error(out && out.error ? out.error.code + ': ' + out.error.message : 'HTTP ' + res.status);
    return out;
  }

  /** @param {unknown} e */
  function messageOf(e) { return e instanceof Error ? e.message : String(e); }

  /** @param {string} iso */
  function utc(iso) { return iso.slice(0, 19).replace('T', ' ') + ' UTC'; }

  /**
   * @param {string} id
   * @param {string} message
   * @param {boolean} [isError]
   */
  function say(id, message, isError) {
    var el = byId(id);
    el.textContent = message;
    el.classList.toggle('error', Boolean(isError));
  }

  /** @param {{ prefix: string, expires_at: string } | null} p */
  function previousNote(p) { return p ? 'The previous secret ' + p.prefix + '… keeps working until ' + utc(p.expires_at) + '.' : ''; }

  /**
   * The key section of the signed-in key, with the secret a roll replaced while it still works.
   * @param {any} a GET /v1/account
   * @param {string} key
   */
  function renderKeyActions(a, key) {
    signedIn = { key: key, id: a.key.id, prefix: a.key.prefix };
    var prev = byId('previous-secret');
    prev.textContent = previousNote(a.key.previous_secret);
    prev.hidden = !a.key.previous_secret;
    byId('revoke-confirm').hidden = true;
    byId('key-actions').hidden = false;
  }

  function mountKeyActions() {
    byId('roll-form').addEventListener('submit', function (ev) {
      ev.preventDefault();
      var from = signedIn;
      if (!from) return;
      var grace = Number(/** @type {HTMLSelectElement} */ (byId('roll-grace')).value);
      var fromPrefix = from.prefix;
      say('key-actions-status', 'Rolling…');
      post('/v1/account/roll', { grace_period_seconds: grace }, from.key).then(function (r) {
        byId('roll-secret').textContent = r.api_key;
        say('roll-note', r.key.previous_secret ? previousNote(r.key.previous_secret) : 'The previous secret ' + fromPrefix + '… no longer works.');
        byId('roll-result').hidden = false;
        say('key-actions-status', '');
        input.value = r.api_key;
        return show(r.api_key);
      }).catch(function (e) { say('key-actions-status', messageOf(e), true); });
    });
    byId('revoke-start').addEventListener('click', function () {
      if (!signedIn) return;
      byId('revoke-question').textContent = 'Revoke ' + signedIn.id + ' (' + signedIn.prefix + '…) for good? Every secret of this key stops at once, '
        + 'and its credits, portfolio and alerts can no longer be used. There is no undo.';
      byId('revoke-confirm').hidden = false;
    });
    byId('revoke-cancel').addEventListener('click', function () { byId('revoke-confirm').hidden = true; });
    byId('revoke-confirm-button').addEventListener('click', function () {
      var target = signedIn;
      if (!target) return;
      post('/v1/account/revoke', { key_id: target.id }, target.key).then(function (r) {
        sessionStorage.removeItem(STORAGE);
        signedIn = null;
        input.value = '';
        hideSections();
        say('status', 'Key ' + r.key.id + ' (' + r.key.prefix + '…) revoked on ' + utc(r.key.revoked_at) + '.');
      }).catch(function (e) { say('key-actions-status', messageOf(e), true); });
    });
  }

  /** The free-key offer, when this server makes it (its OpenAPI document has the operation). */
  async function mountFreeKey() {
    byId('free-key').hidden = !(await operations()).has('POST /v1/account/free-key');
    byId('free-key-form').addEventListener('submit', function (ev) {
      ev.preventDefault();
      var label = /** @type {HTMLInputElement} */ (byId('free-key-label')).value.trim();
      say('free-key-status', 'Creating a key…');
      byId('free-key-result').hidden = true;
      post('/v1/account/free-key', label ? { label: label } : {}).then(function (r) {
        byId('free-key-secret').textContent = r.api_key;
        byId('free-key-result').hidden = false;
        say('free-key-status', 'Created ' + r.key.id + ': Free plan, ' + fmt.format(r.credits.remaining) + ' credits until ' + r.credits.resets_on + '.');
      }).catch(function (e) { say('free-key-status', messageOf(e), true); });
    });
    byId('free-key-use').addEventListener('click', function () {
      var k = byId('free-key-secret').textContent || '';
      if (!k) return;
      input.value = k;
      void show(k);
    });
  }

  /**
   * The clients the key holder authorized on remote MCP (OAuth), each revocable: its tokens stop at once.
   * @param {string} key
   */
  async function renderAuthorizations(key) {
    var r = await optional('/oauth/authorizations', key);
    /** @type {any[]} */
    var list = r.body ? r.body.authorizations : [];
    byId('authorizations-note').textContent = r.error || (list.length ? 'Agents that call the tools on this key’s behalf (its credits and limits).' : 'No MCP client authorized.');
    var body = /** @type {HTMLTableElement} */ (byId('authorization-list')).tBodies[0];
    body.replaceChildren(...list.map(function (a) {
      var revoke = h('button', { type: 'button', 'data-revoke': a.client_id }, 'Revoke');
      revoke.addEventListener('click', async function () {
        var res = await fetch('/oauth/authorizations/' + encodeURIComponent(a.client_id), { method: 'DELETE', headers: { 'X-API-Key': key } });
        if (!res.ok) byId('authorizations-note').textContent = 'Revocation failed: HTTP ' + res.status;
        await renderAuthorizations(key);
      });
      var redirect = (a.redirect_uris || []).map(function (/** @type {string} */ u) { try { return new URL(u).host; } catch (e) { return u; } }).join(', ');
      return h('tr', { 'data-client-id': a.client_id },
        h('td', null, (a.client_name || a.client_id) + (redirect ? ' (' + redirect + ')' : '')), h('td', null, a.scopes.join(', ')),
        h('td', null, String(a.authorized_at).slice(0, 16).replace('T', ' ')), h('td', null, revoke));
    }));
    byId('authorizations').hidden = false;
  }

  // ---- The signed-in key's figures --------------------------------------------------------------------------------

  function hideSections() {
    ['account', 'usage', 'portfolio', 'alerts', 'authorizations', 'recent', 'key-actions', 'roll-result'].forEach(function (id) { byId(id).hidden = true; });
  }

  /** @param {string} key */
  async function show(key) {
    var status = byId('status');
    status.textContent = 'Loading…';
    status.classList.remove('error');
    try {
      // The key first: a wrong one costs one refused request, not three.
      var acc = await get('/v1/account', key);
      var more = await Promise.all([get('/v1/account/usage?days=30', key), get('/v1/account/requests?limit=50', key)]);
      renderAccount(acc);
      renderUsage(more[0]);
      renderRequests(more[1]);
      await Promise.all([renderPortfolio(key), renderAlerts(key, acc.key.plan), renderAuthorizations(key)]);
      renderKeyActions(acc, key);
      sessionStorage.setItem(STORAGE, key);
      status.textContent = 'Figures of ' + acc.key.prefix + '…, as of ' + new Date().toISOString().slice(0, 19).replace('T', ' ') + ' UTC.';
    } catch (e) {
      hideSections();
      signedIn = null;
      status.textContent = e instanceof Error ? e.message : String(e);
      status.classList.add('error');
    }
  }

  var input = /** @type {HTMLInputElement} */ (byId('key'));
  byId('key-form').addEventListener('submit', function (ev) {
    ev.preventDefault();
    byId('roll-result').hidden = true;
    if (input.value.trim()) void show(input.value.trim());
  });
  mountKeyActions();
  void mountFreeKey();
  var saved = sessionStorage.getItem(STORAGE);
  if (saved) {
    input.value = saved;
    void show(saved);
  }
})();
