// The interactive API documentation served at /docs: one self-contained page (inline CSS and vanilla JS, nothing
// fetched from outside, since deployments may have no internet) that renders /v1/openapi.json and can call the API.
import { createHash } from 'node:crypto';

// Client code is a raw string, not a function's toString(): tsx/esbuild may inject helpers (__name) into compiled
// functions that do not exist in the browser. Rules for this string: no backtick and no "${" (it is a template
// literal), and never innerHTML: every text from the spec reaches the DOM through textContent or setAttribute.
const SCRIPT = String.raw`
'use strict';
(function () {
  var KEY_STORE = 'foncier.apiKey';
  var SHOWN_HEADERS = ['x-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'retry-after', 'content-type'];
  var METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'];
  var STATUS_TEXT = { 200: 'OK', 201: 'Created', 204: 'No Content', 400: 'Bad Request', 401: 'Unauthorized',
    402: 'Payment Required', 403: 'Forbidden', 404: 'Not Found', 429: 'Too Many Requests',
    500: 'Internal Server Error', 503: 'Service Unavailable' };
  var spec = {};
  var keyHeader = 'X-API-Key';
  var basePath = '';
  var entries = [];

  // DOM builder: strings become text nodes, attributes go through setAttribute, so nothing is parsed as HTML.
  function h(tag, attrs) {
    var el = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        var v = attrs[k];
        if (v === undefined || v === null || v === false) return;
        if (k === 'class') el.className = v;
        else if (k.slice(0, 2) === 'on') el.addEventListener(k.slice(2), v);
        else if (k === 'style' || k.slice(0, 5) === 'inner') throw new Error('unsafe attribute ' + k);
        else el.setAttribute(k, v === true ? '' : String(v));
      });
    }
    for (var i = 2; i < arguments.length; i++) append(el, arguments[i]);
    return el;
  }
  function append(el, c) {
    if (c === undefined || c === null || c === false) return;
    if (Array.isArray(c)) c.forEach(function (x) { append(el, x); });
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
  function slug(s) { return String(s).toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, ''); }

  // A small, safe subset of Markdown: paragraphs, inline code and bold.
  var TICK = '\x60';
  var INLINE = new RegExp('(' + TICK + '[^' + TICK + ']+' + TICK + '|\\*\\*[^*]+\\*\\*)');
  function md(text) {
    var frag = document.createDocumentFragment();
    String(text).split(/\n\s*\n/).forEach(function (para) {
      var p = h('p');
      para.split(INLINE).forEach(function (part, i) {
        if (i % 2 === 0) append(p, part);
        else if (part.charAt(0) === TICK) append(p, h('code', null, part.slice(1, -1)));
        else append(p, h('strong', null, part.slice(2, -2)));
      });
      frag.appendChild(p);
    });
    return frag;
  }

  // ---- $ref resolution and schema description ------------------------------------------------------------
  function pointer(ref) {
    if (typeof ref !== 'string' || ref.charAt(0) !== '#') return undefined;
    return ref.slice(2).split('/').reduce(function (o, k) {
      return o === undefined || o === null ? undefined : o[k.replace(/~1/g, '/').replace(/~0/g, '~')];
    }, spec);
  }
  function refName(ref) { return String(ref).split('/').pop(); }
  function deref(s) {
    var name = null;
    for (var guard = 0; s && s.$ref && guard < 32; guard++) { name = refName(s.$ref); s = pointer(s.$ref); }
    return { s: s && typeof s === 'object' ? s : {}, name: name };
  }
  function isNull(v) { var s = deref(v).s; return s.type === 'null'; }
  function hasType(s, t) { return s.type === t || (Array.isArray(s.type) && s.type.indexOf(t) >= 0); }
  function isObjectLike(s) { return hasType(s, 'object') || !!s.properties || !!s.allOf; }

  function typeLabel(schema) {
    var d = deref(schema), s = d.s;
    if (d.name && (isObjectLike(s) || s.anyOf || s.oneOf)) return d.name;
    var variants = s.anyOf || s.oneOf;
    if (variants) {
      var nonNull = variants.filter(function (v) { return !isNull(v); });
      var lbl = nonNull.map(typeLabel).join(' | ');
      return nonNull.length < variants.length ? lbl + ' | null' : lbl;
    }
    if (s.allOf) return s.allOf.map(typeLabel).join(' & ');
    var t = s.type;
    var one = function (x) { return x === 'array' ? 'array of ' + (s.items ? typeLabel(s.items) : 'any') : x; };
    if (Array.isArray(t)) t = t.map(one).join(' | ');
    else if (t) t = one(t);
    else if (s.properties) t = 'object';
    else if (s.enum) t = typeof s.enum[0];
    else if ('const' in s) t = typeof s.const;
    else t = 'any';
    if (s.format) t += ' (' + s.format + ')';
    return t;
  }
  function show(v) { return typeof v === 'string' ? v : JSON.stringify(v); }
  function constraints(schema) {
    var s = deref(schema).s, out = [];
    if (s.enum) out.push(['one of', s.enum.map(show).join(', ')]);
    if ('const' in s) out.push(['equals', show(s.const)]);
    if (s.minimum !== undefined) out.push(['min', s.minimum]);
    if (typeof s.exclusiveMinimum === 'number') out.push(['>', s.exclusiveMinimum]);
    if (s.maximum !== undefined) out.push(['max', s.maximum]);
    if (typeof s.exclusiveMaximum === 'number') out.push(['<', s.exclusiveMaximum]);
    if (s.minLength !== undefined) out.push(['min length', s.minLength]);
    if (s.maxLength !== undefined) out.push(['max length', s.maxLength]);
    if (s.minItems !== undefined) out.push(['min items', s.minItems]);
    if (s.maxItems !== undefined) out.push(['max items', s.maxItems]);
    if (s.pattern) out.push(['pattern', s.pattern]);
    if (s.default !== undefined) out.push(['default', show(s.default)]);
    var ex = s.example !== undefined ? s.example : (Array.isArray(s.examples) ? s.examples[0] : undefined);
    if (ex !== undefined && typeof ex !== 'object') out.push(['example', show(ex)]);
    return out;
  }
  function chips(schema) {
    var c = constraints(schema);
    if (!c.length) return null;
    return h('span', { class: 'chips' }, c.map(function (kv) {
      return h('span', { class: 'chip' }, h('span', { class: 'chip-k' }, kv[0]), ' ', h('code', null, String(kv[1])));
    }));
  }

  // Properties of an object schema as a nested list; arrays show their items' properties; anyOf/oneOf list variants.
  function tree(schema, depth, seen) {
    var d = deref(schema), s = d.s;
    if (d.name) {
      if (seen.indexOf(d.name) >= 0) return h('p', { class: 'muted' }, 'recursive: see ' + d.name + ' above');
      seen = seen.concat([d.name]);
    }
    if (depth > 10) return null;
    var variants = s.anyOf || s.oneOf;
    if (variants) {
      var nonNull = variants.filter(function (v) { return !isNull(v); });
      if (nonNull.length === 1) return tree(nonNull[0], depth, seen);
      return h('div', { class: 'variants' }, h('p', { class: 'muted' }, s.oneOf ? 'One of:' : 'Any of:'),
        h('ol', null, nonNull.map(function (v) {
          return h('li', null, h('span', { class: 'type' }, typeLabel(v)), ' ', chips(v), tree(v, depth + 1, seen));
        })));
    }
    if (hasType(s, 'array') && s.items) return tree(s.items, depth, seen);
    var props = {}, required = [];
    [s].concat((s.allOf || []).map(function (x) { return deref(x).s; })).forEach(function (part) {
      Object.keys(part.properties || {}).forEach(function (k) { props[k] = part.properties[k]; });
      required = required.concat(part.required || []);
    });
    var names = Object.keys(props);
    var extra = s.additionalProperties;
    if (!names.length && !extra) return null;
    var ul = h('ul', { class: 'tree' });
    names.forEach(function (k) { ul.appendChild(prop(k, props[k], required.indexOf(k) >= 0, depth, seen)); });
    if (extra) ul.appendChild(prop('[any key]', extra === true ? {} : extra, false, depth, seen));
    return ul;
  }
  function prop(name, schema, required, depth, seen) {
    var s = deref(schema).s;
    var desc = schema.description || s.description;
    return h('li', { class: 'prop' },
      h('div', { class: 'prop-head' }, h('code', { class: 'prop-name' }, name),
        required ? h('span', { class: 'req' }, 'required') : null,
        h('span', { class: 'type' }, typeLabel(schema)), chips(schema)),
      desc ? h('div', { class: 'desc' }, md(desc)) : null,
      tree(schema, depth + 1, seen));
  }
  function schemaBlock(schema) {
    return h('div', { class: 'schema' }, h('p', { class: 'schema-type' }, 'Type: ', h('span', { class: 'type' }, typeLabel(schema)), ' ', chips(schema)),
      tree(schema, 0, []));
  }

  // A plausible example value, used to pre-fill request bodies.
  function sample(schema, depth) {
    var s = deref(schema).s;
    if (depth > 6) return null;
    if (s.example !== undefined) return s.example;
    if (Array.isArray(s.examples) && s.examples.length) return s.examples[0];
    if (s.default !== undefined) return s.default;
    if ('const' in s) return s.const;
    if (s.enum) return s.enum[0];
    var variants = s.anyOf || s.oneOf;
    if (variants) { var nn = variants.filter(function (v) { return !isNull(v); }); return nn.length ? sample(nn[0], depth + 1) : null; }
    if (isObjectLike(s)) {
      var o = {};
      [s].concat((s.allOf || []).map(function (x) { return deref(x).s; })).forEach(function (part) {
        Object.keys(part.properties || {}).forEach(function (k) { o[k] = sample(part.properties[k], depth + 1); });
      });
      return o;
    }
    if (hasType(s, 'array')) return s.items ? [sample(s.items, depth + 1)] : [];
    if (hasType(s, 'integer') || hasType(s, 'number')) return s.minimum !== undefined ? s.minimum : 0;
    if (hasType(s, 'boolean')) return false;
    if (hasType(s, 'string')) return s.format === 'date' ? '2024-01-31' : 'string';
    return null;
  }

  // ---- Operations -----------------------------------------------------------------------------------------
  function credits(op) {
    var x = op['x-credits'];
    if (x !== undefined && x !== null && x !== '') return typeof x === 'number' ? x + (x === 1 ? ' credit' : ' credits') : String(x);
    var text = (op.description || '') + ' ' + (op.summary || '');
    var m = text.match(/(\d+)\s*(?:\*\*)?\s*credits?\b/i) || text.match(/credits?\s*:\s*(\d+)/i);
    return m ? m[1] + (m[1] === '1' ? ' credit' : ' credits') : null;
  }
  function collectOperations() {
    var ops = [];
    Object.keys(spec.paths || {}).forEach(function (path) {
      var item = deref(spec.paths[path]).s;
      METHODS.forEach(function (method) {
        var op = item[method];
        if (!op) return;
        var params = {};
        (item.parameters || []).concat(op.parameters || []).forEach(function (p) {
          var r = deref(p).s;
          if (r.name) params[r.in + ':' + r.name] = r;
        });
        ops.push({ path: path, method: method, op: op, id: 'op-' + method + '-' + slug(path),
          params: Object.keys(params).map(function (k) { return params[k]; }),
          tag: (op.tags && op.tags[0]) || 'Other', credits: credits(op) });
      });
    });
    return ops;
  }

  function paramTable(params) {
    return h('table', null,
      h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col' }, 'In'),
        h('th', { scope: 'col' }, 'Type and constraints'), h('th', { scope: 'col' }, 'Description'))),
      h('tbody', null, params.map(function (p) {
        var schema = p.schema || {};
        var desc = p.description || deref(schema).s.description;
        return h('tr', null,
          h('td', null, h('code', { class: 'prop-name' }, p.name), p.required ? h('span', { class: 'req' }, 'required') : null,
            p.deprecated ? h('span', { class: 'chip' }, 'deprecated') : null),
          h('td', null, p.in),
          h('td', null, h('span', { class: 'type' }, typeLabel(schema)), ' ', chips(schema)),
          h('td', null, desc ? md(desc) : h('span', { class: 'muted' }, '—')));
      })));
  }
  function contentBlocks(content) {
    return Object.keys(content || {}).map(function (type) {
      var c = content[type] || {};
      return h('div', { class: 'content' }, h('p', { class: 'muted' }, type), c.schema ? schemaBlock(c.schema) : null);
    });
  }
  function errorCodes(resp) {
    // Codes documented by examples (error.code) or by an x-error-codes extension.
    var codes = [].concat(resp['x-error-codes'] || []);
    Object.keys(resp.content || {}).forEach(function (type) {
      var c = resp.content[type] || {};
      var exs = [c.example].concat(Object.keys(c.examples || {}).map(function (k) { return deref(c.examples[k]).s.value; }));
      exs.forEach(function (e) { if (e && e.error && e.error.code && codes.indexOf(e.error.code) < 0) codes.push(e.error.code); });
    });
    return codes;
  }
  function responsesSection(op, headingId) {
    var codes = Object.keys(op.responses || {});
    var ok = codes.filter(function (c) { return /^[123]/.test(c); });
    var errors = codes.filter(function (c) { return !/^[123]/.test(c); });
    var out = [];
    if (ok.length) {
      out.push(h('h4', { id: headingId + '-responses' }, 'Responses'));
      ok.forEach(function (code) {
        var r = deref(op.responses[code]).s;
        out.push(h('div', { class: 'response' },
          h('p', null, h('span', { class: 'status s' + code.charAt(0) }, code), ' ', r.description || ''),
          contentBlocks(r.content)));
      });
    }
    if (errors.length) {
      out.push(h('h4', null, 'Errors'));
      out.push(h('table', { class: 'errors' },
        h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Status'), h('th', { scope: 'col' }, 'When'), h('th', { scope: 'col' }, 'Body'))),
        h('tbody', null, errors.map(function (code) {
          var r = deref(op.responses[code]).s;
          var types = Object.keys(r.content || {});
          var schema = types.length ? (r.content[types[0]] || {}).schema : null;
          var ec = errorCodes(r);
          return h('tr', null, h('td', null, h('span', { class: 'status s' + code.charAt(0) }, code)),
            h('td', null, r.description ? md(r.description) : null,
              ec.length ? h('p', null, 'Codes: ', ec.map(function (c, i) { return [i ? ', ' : '', h('code', null, c)]; })) : null),
            h('td', null, schema ? h('span', { class: 'type' }, typeLabel(schema)) : h('span', { class: 'muted' }, 'none')));
        }))));
    }
    return out;
  }

  // ---- Try it ---------------------------------------------------------------------------------------------
  function storedKey() { try { return localStorage.getItem(KEY_STORE) || ''; } catch (e) { return ''; } }
  function storeKey(v, source) {
    try { if (v) localStorage.setItem(KEY_STORE, v); else localStorage.removeItem(KEY_STORE); } catch (e) { /* private mode */ }
    document.querySelectorAll('input.api-key').forEach(function (el) { if (el !== source) el.value = v; });
  }
  function paramControl(p, id) {
    var s = deref(p.schema || {}).s;
    var variants = s.anyOf || s.oneOf;
    if (variants) { var nn = variants.filter(function (v) { return !isNull(v); }); if (nn.length === 1) s = deref(nn[0]).s; }
    var common = { id: id, name: p.name, 'data-in': p.in, required: p.required ? true : null };
    var values = s.enum || (hasType(s, 'boolean') ? [true, false] : null);
    if (values) {
      var sel = h('select', common, h('option', { value: '' }, p.required ? '— choose —' : '(not sent)'));
      values.forEach(function (v) { sel.appendChild(h('option', { value: String(v) }, String(v))); });
      return sel;
    }
    var numeric = hasType(s, 'integer') || hasType(s, 'number');
    var attrs = Object.assign({}, common, { type: numeric ? 'number' : 'text', autocomplete: 'off', spellcheck: 'false' });
    if (numeric) {
      attrs.step = hasType(s, 'integer') ? '1' : 'any';
      if (s.minimum !== undefined) attrs.min = s.minimum;
      if (s.maximum !== undefined) attrs.max = s.maximum;
    }
    // Placeholders say "e.g." so that an example is not mistaken for a value that will be sent.
    var ex = s.example !== undefined ? s.example : p.example;
    if (ex !== undefined && typeof ex !== 'object') attrs.placeholder = 'e.g. ' + ex;
    else if (s.default !== undefined && typeof s.default !== 'object') attrs.placeholder = 'default ' + s.default;
    return h('input', attrs);
  }
  function tryPanel(e) {
    var op = e.op, id = e.id;
    var keyId = id + '-key', result = h('div', { class: 'result', 'aria-live': 'polite' });
    var bodyEl = null;
    var form = h('form', { class: 'try-form', novalidate: true },
      h('div', { class: 'field' }, h('label', { for: keyId }, 'API key ', h('span', { class: 'muted' }, '(sent as ' + keyHeader + ', kept in this browser)')),
        h('input', { id: keyId, class: 'api-key', type: 'password', autocomplete: 'off', spellcheck: 'false', value: storedKey(),
          oninput: function (ev) { storeKey(ev.target.value.trim(), ev.target); } })),
      e.params.length ? h('fieldset', null, h('legend', null, 'Parameters'), e.params.map(function (p) {
        var pid = id + '-p-' + slug(p.in + '-' + p.name);
        return h('div', { class: 'field' },
          h('label', { for: pid }, h('code', null, p.name), ' ', h('span', { class: 'muted' }, p.in), p.required ? h('span', { class: 'req' }, 'required') : null),
          paramControl(p, pid));
      })) : null);
    var rb = op.requestBody ? deref(op.requestBody).s : null;
    if (rb) {
      var types = Object.keys(rb.content || {});
      var json = (rb.content || {})['application/json'] || (rb.content || {})[types[0]] || {};
      bodyEl = h('textarea', { id: id + '-body', rows: 8, spellcheck: 'false', 'data-type': types[0] || 'application/json' });
      bodyEl.value = json.schema ? JSON.stringify(sample(json.schema, 0), null, 2) : '';
      form.appendChild(h('div', { class: 'field' }, h('label', { for: id + '-body' }, 'Request body ', h('span', { class: 'muted' }, types[0] || '')), bodyEl));
    }
    var send = h('button', { type: 'submit', class: 'send' }, 'Send ' + e.method.toUpperCase() + ' request');
    form.appendChild(h('div', { class: 'actions' }, send));
    form.appendChild(result);
    form.addEventListener('submit', function (ev) {
      ev.preventDefault();
      call(e, form, bodyEl, result, send);
    });
    return h('section', { class: 'try', 'aria-labelledby': id + '-try' }, h('h4', { id: id + '-try' }, 'Try it'), form);
  }
  function call(e, form, bodyEl, result, send) {
    var path = e.path, query = new URLSearchParams(), headers = {}, missing = [];
    form.querySelectorAll('[data-in]').forEach(function (el) {
      var v = el.value.trim(), where = el.getAttribute('data-in');
      if (!v) { if (el.required) missing.push(el.name); return; }
      if (where === 'path') path = path.split('{' + el.name + '}').join(encodeURIComponent(v));
      else if (where === 'query') query.append(el.name, v);
      else if (where === 'header') headers[el.name] = v;
    });
    result.textContent = '';
    if (missing.length) { append(result, h('p', { class: 'problem', role: 'alert' }, 'Required: ' + missing.join(', '))); return; }
    var key = form.querySelector('input.api-key').value.trim();
    if (key) headers[keyHeader] = key;
    var init = { method: e.method.toUpperCase(), headers: headers, cache: 'no-store' };
    if (bodyEl && bodyEl.value.trim()) { init.body = bodyEl.value; headers['Content-Type'] = bodyEl.getAttribute('data-type'); }
    var url = basePath + path + (query.toString() ? '?' + query.toString() : '');
    var started = performance.now();
    send.disabled = true;
    append(result, h('p', { class: 'muted' }, 'Sending ' + init.method + ' ' + url + '…'));
    fetch(url, init).then(function (res) {
      return res.text().then(function (text) { render(res, text); });
    }, function (err) {
      result.textContent = '';
      append(result, h('p', { class: 'problem', role: 'alert' }, 'Network error: ' + (err && err.message ? err.message : String(err))));
    }).finally(function () { send.disabled = false; });
    function render(res, text) {
      var ms = Math.round(performance.now() - started);
      var body = text;
      try { if (text) body = JSON.stringify(JSON.parse(text), null, 2); } catch (x) { /* not JSON: shown as is */ }
      var shown = SHOWN_HEADERS.filter(function (n) { return res.headers.get(n) !== null; });
      result.textContent = '';
      append(result, [
        h('p', { class: 'req-line' }, h('span', { class: 'method m-' + e.method }, init.method), ' ', h('code', null, url)),
        h('p', null, h('span', { class: 'status s' + String(res.status).charAt(0) }, res.status + ' ' + (res.statusText || STATUS_TEXT[res.status] || '')),
          ' ', h('span', { class: 'muted' }, ms + ' ms')),
        shown.length ? h('dl', { class: 'headers' }, shown.map(function (n) { return [h('dt', null, n), h('dd', null, res.headers.get(n))]; })) : null,
        h('pre', { class: 'body', tabindex: 0 }, h('code', null, body || '(empty body)'))]);
    }
  }

  // ---- Page -----------------------------------------------------------------------------------------------
  function endpointHead(e) {
    return [h('span', { class: 'method m-' + e.method }, e.method.toUpperCase()), ' ',
      h('code', { class: 'path' }, e.path), ' ',
      h('span', { class: 'summary' }, e.op.summary || ''),
      e.credits ? h('span', { class: 'credits' }, e.credits) : null,
      e.op.deprecated ? h('span', { class: 'chip' }, 'deprecated') : null];
  }
  function operation(e) {
    var op = e.op;
    var rb = op.requestBody ? deref(op.requestBody).s : null;
    var details = h('details', { id: e.id },
      h('summary', null, endpointHead(e)),
      h('div', { class: 'op-body' },
        op.description ? h('div', { class: 'desc' }, md(op.description)) : null,
        h('h4', null, 'Parameters'),
        e.params.length ? paramTable(e.params) : h('p', { class: 'muted' }, 'None.'),
        rb ? [h('h4', null, 'Request body', rb.required ? h('span', { class: 'req' }, 'required') : null),
          rb.description ? md(rb.description) : null, contentBlocks(rb.content)] : null,
        responsesSection(op, e.id),
        tryPanel(e)));
    return h('article', { class: 'endpoint', 'data-method': e.method.toUpperCase(), 'data-path': e.path }, details);
  }
  function errorOverview() {
    // The shared error body, taken from the first documented error response.
    for (var i = 0; i < entries.length; i++) {
      var rs = entries[i].op.responses || {};
      var codes = Object.keys(rs).filter(function (c) { return !/^[123]/.test(c); });
      for (var j = 0; j < codes.length; j++) {
        var r = deref(rs[codes[j]]).s, c = (r.content || {})['application/json'];
        if (c && c.schema) return c.schema;
      }
    }
    return null;
  }
  function groups() {
    var byTag = {}, order = [];
    (spec.tags || []).forEach(function (t) { if (t && t.name && !byTag[t.name]) { byTag[t.name] = []; order.push(t.name); } });
    entries.forEach(function (e) { if (!byTag[e.tag]) { byTag[e.tag] = []; order.push(e.tag); } byTag[e.tag].push(e); });
    return order.filter(function (t) { return byTag[t].length; }).map(function (t) {
      var meta = (spec.tags || []).filter(function (x) { return x && x.name === t; })[0] || {};
      return { name: t, description: meta.description, entries: byTag[t] };
    });
  }
  function open(id) {
    var el = id && document.getElementById(id);
    if (el && el.tagName === 'DETAILS') { el.open = true; el.scrollIntoView({ block: 'start' }); }
  }

  function render() {
    var info = spec.info || {};
    document.title = (info.title || 'API') + ' — documentation';
    var head = document.getElementById('info');
    head.textContent = '';
    append(head, [h('h1', null, info.title || 'API', ' ', info.version ? h('span', { class: 'version' }, 'v' + info.version) : null,
      spec.openapi ? h('span', { class: 'version oas' }, 'OpenAPI ' + spec.openapi) : null),
      info.description ? h('div', { class: 'desc' }, md(info.description)) : null,
      h('p', { class: 'muted' }, 'Authentication: send your API key in the ', h('code', null, keyHeader),
        ' header. The machine-readable description is at ', h('a', { href: '/v1/openapi.json' }, '/v1/openapi.json'), '.')]);

    var nav = document.getElementById('toc'), main = document.getElementById('endpoints');
    nav.textContent = ''; main.textContent = ''; main.removeAttribute('aria-busy');
    groups().forEach(function (g) {
      var gid = 'tag-' + slug(g.name);
      var list = h('ul', null, g.entries.map(function (e) {
        e.tocItem = h('li', null, h('a', { href: '#' + e.id, onclick: function () { open(e.id); } },
          h('span', { class: 'method m-' + e.method }, e.method.toUpperCase()), ' ', h('span', { class: 'path' }, e.path)));
        return e.tocItem;
      }));
      g.tocGroup = h('li', null, h('a', { href: '#' + gid, class: 'toc-tag' }, g.name), list);
      nav.appendChild(g.tocGroup);
      g.section = h('section', { class: 'tag-group', 'aria-labelledby': gid },
        h('h2', { id: gid }, g.name), g.description ? h('div', { class: 'desc' }, md(g.description)) : null,
        g.entries.map(function (e) {
          e.article = operation(e);
          e.haystack = [e.method, e.path, e.op.summary, e.op.description, e.op.operationId, e.tag].join(' ').toLowerCase();
          return e.article;
        }));
      main.appendChild(g.section);
    });
    var err = errorOverview();
    if (err) {
      main.appendChild(h('section', { class: 'tag-group', 'aria-labelledby': 'errors-h' }, h('h2', { id: 'errors-h' }, 'Error body'),
        h('p', null, 'Every error answers with this JSON body; ', h('code', null, 'code'), ' is stable and meant for programs, ',
          h('code', null, 'message'), ' for people.'), schemaBlock(err)));
    }
    filter();
    if (location.hash) open(location.hash.slice(1));
  }

  function filter() {
    var box = document.getElementById('search');
    var words = box.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0;
    entries.forEach(function (e) {
      var hit = words.every(function (w) { return e.haystack.indexOf(w) >= 0; });
      e.article.hidden = !hit; e.tocItem.hidden = !hit;
      if (hit) shown++;
    });
    document.querySelectorAll('.tag-group').forEach(function (sec) {
      var arts = sec.querySelectorAll('.endpoint');
      if (arts.length) sec.hidden = Array.prototype.every.call(arts, function (a) { return a.hidden; });
    });
    document.querySelectorAll('#toc > li').forEach(function (li) {
      li.hidden = Array.prototype.every.call(li.querySelectorAll('li'), function (x) { return x.hidden; });
    });
    document.getElementById('count').textContent = words.length
      ? shown + ' of ' + entries.length + ' endpoints match'
      : entries.length + ' endpoints';
  }

  function start() {
    document.getElementById('search').addEventListener('input', filter);
    window.addEventListener('hashchange', function () { open(location.hash.slice(1)); });
    document.addEventListener('keydown', function (ev) {
      var t = ev.target && ev.target.tagName;
      if (ev.key === '/' && t !== 'INPUT' && t !== 'TEXTAREA' && t !== 'SELECT') { ev.preventDefault(); document.getElementById('search').focus(); }
    });
    fetch('/v1/openapi.json', { headers: { Accept: 'application/json' } }).then(function (res) {
      if (!res.ok) throw new Error('HTTP ' + res.status);
      return res.json();
    }).then(function (doc) {
      spec = doc || {};
      var schemes = (spec.components && spec.components.securitySchemes) || {};
      Object.keys(schemes).forEach(function (k) {
        var s = deref(schemes[k]).s;
        if (s.type === 'apiKey' && s.in === 'header' && s.name && keyHeader === 'X-API-Key') keyHeader = s.name;
      });
      var server = spec.servers && spec.servers[0] && spec.servers[0].url;
      if (server) {
        // Only same-origin servers can be called from here (connect-src 'self'); use their path prefix.
        try { var u = new URL(server, location.href); if (u.origin === location.origin) basePath = u.pathname.replace(/\/+$/, ''); } catch (x) { /* ignored */ }
      }
      entries = collectOperations();
      render();
    }).catch(function (err) {
      var main = document.getElementById('endpoints');
      main.removeAttribute('aria-busy');
      main.textContent = '';
      append(main, h('p', { class: 'problem', role: 'alert' }, 'Could not load the API description /v1/openapi.json: ' + err.message));
    });
  }
  start();
})();
`;

const STYLE = `
:root { color-scheme: light dark; --bg: #fbfbfa; --fg: #1d2125; --muted: #5b6470; --line: #dfe2e6; --card: #fff;
  --accent: #0b5cad; --code: #f1f3f5; --get: #0a7d45; --post: #8a4b00; --put: #6b3fa0; --delete: #b3261e; --patch: #00658f; }
@media (prefers-color-scheme: dark) { :root { --bg: #15181b; --fg: #e6e8ea; --muted: #a2abb5; --line: #2e343a; --card: #1c2024;
  --accent: #7cb7ff; --code: #262b31; --get: #53d08f; --post: #f0a94a; --put: #c29bf2; --delete: #ff8a80; --patch: #5cc8f2; } }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
code, pre, textarea, .path { font-family: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.9em; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: var(--card); padding: 8px; }
.skip:focus { left: 8px; z-index: 10; }
header#info { padding: 24px 32px 8px; border-bottom: 1px solid var(--line); }
h1 { margin: 0 0 8px; font-size: 1.7rem; }
h2 { font-size: 1.25rem; margin: 28px 0 8px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h4 { margin: 18px 0 6px; font-size: 0.95rem; text-transform: uppercase; letter-spacing: 0.04em; color: var(--muted); }
.version { font-size: 0.8rem; font-weight: 600; vertical-align: middle; padding: 2px 8px; margin-left: 6px; border-radius: 999px; background: var(--code); color: var(--muted); }
.layout { display: grid; grid-template-columns: 300px minmax(0, 1fr); gap: 0; }
nav.sidebar { position: sticky; top: 0; align-self: start; max-height: 100vh; overflow: auto; padding: 16px; border-right: 1px solid var(--line); }
nav.sidebar label { display: block; font-weight: 600; margin-bottom: 4px; }
nav.sidebar label .muted { font-weight: 400; font-size: 0.85em; }
#search { width: 100%; padding: 8px 10px; border: 1px solid var(--line); border-radius: 6px; background: var(--card); color: var(--fg); font: inherit; }
#count { margin: 6px 0 12px; }
#toc, #toc ul { list-style: none; margin: 0; padding: 0; }
#toc > li { margin-bottom: 12px; }
#toc .toc-tag { font-weight: 600; color: var(--fg); text-decoration: none; }
#toc ul a { display: block; padding: 2px 4px; border-radius: 4px; text-decoration: none; color: var(--fg); font-size: 0.88rem; overflow-wrap: anywhere; }
#toc ul a:hover { background: var(--code); }
main { padding: 8px 32px 48px; min-width: 0; }
.muted { color: var(--muted); }
.desc p { margin: 4px 0; }
p code, li code, td code, .desc code { background: var(--code); padding: 1px 4px; border-radius: 4px; }
.endpoint { background: var(--card); border: 1px solid var(--line); border-radius: 8px; margin: 10px 0; }
.endpoint > details > summary { cursor: pointer; padding: 10px 14px; display: flex; flex-wrap: wrap; align-items: center; gap: 8px; list-style-position: inside; }
.endpoint > details[open] > summary { border-bottom: 1px solid var(--line); }
.endpoint .path { font-weight: 600; overflow-wrap: anywhere; }
.endpoint .summary { color: var(--muted); }
.op-body { padding: 4px 16px 16px; }
.method { display: inline-block; min-width: 4.2em; text-align: center; font-weight: 700; font-size: 0.75rem; padding: 2px 6px; border-radius: 4px; border: 1px solid currentColor; }
.m-get { color: var(--get); } .m-post { color: var(--post); } .m-put { color: var(--put); } .m-delete { color: var(--delete); } .m-patch { color: var(--patch); }
.credits { margin-left: auto; font-size: 0.8rem; font-weight: 600; padding: 2px 8px; border-radius: 999px; background: var(--code); }
.chip { display: inline-block; font-size: 0.78rem; padding: 0 6px; margin: 1px 2px; border-radius: 4px; background: var(--code); }
.chip-k { color: var(--muted); }
.chip code { background: none; padding: 0; }
.req { font-size: 0.72rem; font-weight: 700; color: var(--delete); margin-left: 6px; text-transform: uppercase; }
.type { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, monospace; font-size: 0.85em; color: var(--accent); margin-left: 6px; }
table { border-collapse: collapse; width: 100%; margin: 4px 0 8px; font-size: 0.92rem; }
th, td { text-align: left; vertical-align: top; border-bottom: 1px solid var(--line); padding: 6px 8px; }
th { font-weight: 600; color: var(--muted); }
td p { margin: 0; }
ul.tree { list-style: none; margin: 2px 0 2px 4px; padding-left: 14px; border-left: 2px solid var(--line); }
ul.tree li.prop { margin: 4px 0; }
ul.tree .desc { margin-left: 2px; font-size: 0.9em; color: var(--muted); }
.prop-name { font-weight: 600; }
.schema-type { margin: 4px 0; }
.variants ol { margin: 2px 0; }
.status { display: inline-block; font-weight: 700; padding: 0 6px; border-radius: 4px; background: var(--code); }
.s2, .s3 { color: var(--get); } .s4 { color: var(--post); } .s5 { color: var(--delete); }
.try { margin-top: 20px; padding: 12px 14px; border: 1px dashed var(--line); border-radius: 8px; }
.try h4 { margin-top: 0; }
fieldset { border: 1px solid var(--line); border-radius: 6px; margin: 8px 0; padding: 8px 12px; }
legend { font-weight: 600; padding: 0 4px; }
.field { display: grid; grid-template-columns: minmax(160px, 240px) minmax(0, 1fr); gap: 10px; align-items: center; margin: 6px 0; }
.field input, .field select, .field textarea { width: 100%; padding: 6px 8px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); font: inherit; }
.field textarea { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, monospace; }
.actions { margin: 10px 0; }
button.send { font: inherit; font-weight: 600; padding: 7px 16px; border: 0; border-radius: 6px; background: var(--accent); color: var(--bg); cursor: pointer; }
button.send:disabled { opacity: 0.6; cursor: progress; }
.result .req-line { overflow-wrap: anywhere; }
dl.headers { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 6px 0; font-size: 0.88rem; }
dl.headers dt { color: var(--muted); } dl.headers dd { margin: 0; font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
pre.body { background: var(--code); padding: 10px 12px; border-radius: 6px; overflow: auto; max-height: 420px; }
.problem { color: var(--delete); font-weight: 600; }
[hidden] { display: none !important; }
@media (max-width: 820px) { .layout { grid-template-columns: 1fr; } nav.sidebar { position: static; max-height: none; border-right: 0; border-bottom: 1px solid var(--line); }
  main, header#info { padding-left: 16px; padding-right: 16px; } .field { grid-template-columns: 1fr; gap: 2px; } }
`;

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/**
 * Content-Security-Policy for the page: only its own inline script and style (pinned by hash, so no nonce per request
 * is needed), calls to the same origin, and nothing else; the data: image is the empty favicon.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  `script-src ${sha256(SCRIPT)}`,
  `style-src ${sha256(STYLE)}`,
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>API documentation</title>
<link rel="icon" href="data:,">
<style>${STYLE}</style>
</head>
<body>
<a class="skip" href="#endpoints">Skip to the endpoints</a>
<header id="info"><h1>API documentation</h1></header>
<div class="layout">
<nav class="sidebar" aria-label="Endpoints">
<label for="search">Filter endpoints <span class="muted">(press /)</span></label>
<input id="search" type="search" placeholder="e.g. stats, POST, {id}" autocomplete="off" spellcheck="false">
<p id="count" class="muted" role="status" aria-live="polite"></p>
<ul id="toc"></ul>
</nav>
<main id="endpoints" aria-busy="true" tabindex="-1"><p class="muted" role="status">Loading the API description…</p></main>
</div>
<script>${SCRIPT}</script>
</body>
</html>
`;

/** The /docs page: static, so the same string is served every time (its CSP hashes are computed once). */
export function docsPageHtml(): string {
  return HTML;
}
