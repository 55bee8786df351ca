// @ts-check
// The interactive API documentation at /docs: renders /v1/openapi.json and can call the API ("Try it"). Served as a
// static file under a CSP without inline code (api/docs-page.ts); type-checked by `npm run typecheck` with the DOM
// library (api/docs/tsconfig.json). Nothing is fetched from outside: deployments may have no internet. Never
// innerHTML: every text from the document reaches the DOM through textContent or setAttribute (h() below).
'use strict';
/**
 * A part of the OpenAPI document: arbitrary JSON from the server, read defensively.
 * @typedef {Record<string, any>} Json
 */
/**
 * What the DOM builder accepts as content: nodes, text (numbers included), nothing, or lists of those.
 * @typedef {Node | string | number | null | undefined | false | { readonly [i: number]: Child, readonly length: number }} Child
 */
/**
 * One operation of the document, with what the page builds for it.
 * @typedef {{ path: string, method: string, op: Json, id: string, params: Json[], tag: string, credits: string | null,
 *   tocItem?: HTMLElement, article?: HTMLElement, haystack?: string }} Entry
 */
/** @typedef {{ name: string, description?: string, entries: Entry[], tocGroup?: HTMLElement, section?: HTMLElement }} Group */
(function () {
  var KEY_STORE = 'foncier.apiKey';
  var SHOWN_HEADERS = ['x-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'retry-after', 'content-type'];
  var METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'];
  /** @type {Record<number, string>} */
  var STATUS_TEXT = { 200: 'OK', 201: 'Created', 204: 'No Content', 400: 'Bad Request', 401: 'Unauthorized',
    402: 'Payment Required', 403: 'Forbidden', 404: 'Not Found', 429: 'Too Many Requests',
    500: 'Internal Server Error', 503: 'Service Unavailable' };
  /** @type {Json} */
  var spec = {};
  var keyHeader = 'X-API-Key';
  var basePath = '';
  /** @type {Entry[]} */
  var entries = [];

  // DOM builder: strings become text nodes, attributes go through setAttribute, so nothing is parsed as HTML.
  /**
   * @template {keyof HTMLElementTagNameMap} K
   * @param {K} tag
   * @param {Json | null} [attrs] attributes; `on…` keys are event listeners
   * @param {...Child} children
   * @returns {HTMLElementTagNameMap[K]}
   */
  function h(tag, attrs, ...children) {
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
    children.forEach(function (c) { append(el, c); });
    return el;
  }
  /**
   * @param {Node} el
   * @param {Child} c
   */
  function append(el, c) {
    if (c === undefined || c === null || c === false) return;
    if (Array.isArray(c)) c.forEach(function (x) { append(el, x); });
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
  /**
   * An element of the page's HTML shell (index.html): missing one is a bug of the shell, not of the document.
   * @param {string} id
   */
  function byId(id) {
    var el = document.getElementById(id);
    if (!el) throw new Error('the page has no #' + id);
    return el;
  }
  /** @param {unknown} s */
  function slug(s) { return String(s).toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, ''); }

  // A small, safe subset of Markdown: paragraphs, inline code and bold.
  var TICK = '`';
  var INLINE = /(`[^`]+`|\*\*[^*]+\*\*)/;
  /**
   * @param {unknown} text
   * @returns {DocumentFragment}
   */
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
  /**
   * @param {unknown} ref
   * @returns {any}
   */
  function pointer(ref) {
    if (typeof ref !== 'string' || ref.charAt(0) !== '#') return undefined;
    return ref.slice(2).split('/').reduce(function (o, k) {
      return o === undefined || o === null ? undefined : o[k.replace(/~1/g, '/').replace(/~0/g, '~')];
    }, spec);
  }
  /**
   * @param {unknown} ref
   */
  function refName(ref) { return /** @type {string} */ (String(ref).split('/').pop()); }
  /**
   * @param {any} s
   * @returns {{ s: Json, name: string | null }}
   */
  function deref(s) {
    /** @type {string | null} */
    var name = null;
    for (var guard = 0; s && s.$ref && guard < 32; guard++) { name = refName(s.$ref); s = pointer(s.$ref); }
    return { s: s && typeof s === 'object' ? s : {}, name: name };
  }
  /**
   * @param {Json} v
   */
  function isNull(v) { var s = deref(v).s; return s.type === 'null'; }
  /** @param {Json} v */
  function notNull(v) { return !isNull(v); }
  /** @param {Json} x */
  function resolved(x) { return deref(x).s; }
  /**
   * @param {Json} s
   * @param {string} t
   */
  function hasType(s, t) { return s.type === t || (Array.isArray(s.type) && s.type.indexOf(t) >= 0); }
  /**
   * @param {Json} s
   */
  function isObjectLike(s) { return hasType(s, 'object') || !!s.properties || !!s.allOf; }

  /**
   * @param {Json} schema
   * @returns {string}
   */
  function typeLabel(schema) {
    var d = deref(schema), s = d.s;
    if (d.name && (isObjectLike(s) || s.anyOf || s.oneOf)) return d.name;
    /** @type {Json[] | undefined} */
    var variants = s.anyOf || s.oneOf;
    if (variants) {
      var nonNull = variants.filter(notNull);
      var lbl = nonNull.map(typeLabel).join(' | ');
      return nonNull.length < variants.length ? lbl + ' | null' : lbl;
    }
    if (s.allOf) return s.allOf.map(typeLabel).join(' & ');
    var t = s.type;
    /** @param {string} x */
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
  /**
   * @param {unknown} v
   */
  function show(v) { return typeof v === 'string' ? v : JSON.stringify(v); }
  /**
   * @param {Json} schema
   * @returns {Array<[string, unknown]>}
   */
  function constraints(schema) {
    var s = deref(schema).s;
    /** @type {Array<[string, unknown]>} */
    var out = [];
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
  /**
   * @param {Json} schema
   */
  function chips(schema) {
    var c = constraints(schema);
    if (!c.length) return null;
    return h('span', { class: 'chips' }, c.map(function (kv) {
      return h('span', { class: 'chip' }, h('span', { class: 'chip-k' }, kv[0]), ' ', h('code', null, String(kv[1])));
    }));
  }

  // Properties of an object schema as a nested list; arrays show their items' properties; anyOf/oneOf list variants.
  /**
   * @param {Json} schema
   * @param {number} depth
   * @param {string[]} seen
   * @returns {HTMLElement | null}
   */
  function tree(schema, depth, seen) {
    var d = deref(schema), s = d.s;
    if (d.name) {
      if (seen.indexOf(d.name) >= 0) return h('p', { class: 'muted' }, 'recursive: see ' + d.name + ' above');
      seen = seen.concat([d.name]);
    }
    if (depth > 10) return null;
    /** @type {Json[] | undefined} */
    var variants = s.anyOf || s.oneOf;
    if (variants) {
      var nonNull = variants.filter(notNull);
      if (nonNull.length === 1) return tree(nonNull[0], depth, seen);
      return h('div', { class: 'variants' }, h('p', { class: 'muted' }, s.oneOf ? 'One of:' : 'Any of:'),
        h('ol', null, nonNull.map(function (v) {
          return h('li', null, h('span', { class: 'type' }, typeLabel(v)), ' ', chips(v), tree(v, depth + 1, seen));
        })));
    }
    if (hasType(s, 'array') && s.items) return tree(s.items, depth, seen);
    /** @type {Json} */
    var props = {};
    /** @type {string[]} */
    var required = [];
    [s].concat((s.allOf || []).map(resolved)).forEach(function (part) {
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
  /**
   * @param {string} name
   * @param {Json} schema
   * @param {boolean} required
   * @param {number} depth
   * @param {string[]} seen
   */
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
  /**
   * @param {Json} schema
   */
  function schemaBlock(schema) {
    return h('div', { class: 'schema' }, h('p', { class: 'schema-type' }, 'Type: ', h('span', { class: 'type' }, typeLabel(schema)), ' ', chips(schema)),
      tree(schema, 0, []));
  }

  // A plausible example value, used to pre-fill request bodies.
  /**
   * @param {Json} schema
   * @param {number} depth
   * @returns {unknown}
   */
  function sample(schema, depth) {
    var s = deref(schema).s;
    if (depth > 6) return null;
    if (s.example !== undefined) return s.example;
    if (Array.isArray(s.examples) && s.examples.length) return s.examples[0];
    if (s.default !== undefined) return s.default;
    if ('const' in s) return s.const;
    if (s.enum) return s.enum[0];
    /** @type {Json[] | undefined} */
    var variants = s.anyOf || s.oneOf;
    if (variants) { var nn = variants.filter(notNull); return nn.length ? sample(nn[0], depth + 1) : null; }
    if (isObjectLike(s)) {
      /** @type {Json} */
      var o = {};
      [s].concat((s.allOf || []).map(resolved)).forEach(function (part) {
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
  /**
   * @param {Json} op
   * @returns {string | null}
   */
  function credits(op) {
    var x = op['x-credits'];
    if (x !== undefined && x !== null && x !== '') return typeof x === 'number' ? x + (x === 1 ? ' credit' : ' credits') : String(x);
    var text = (op.description || '') + ' ' + (op.summary || '');
    var m = text.match(/(\d+)\s*(?:\*\*)?\s*credits?\b/i) || text.match(/credits?\s*:\s*(\d+)/i);
    return m ? m[1] + (m[1] === '1' ? ' credit' : ' credits') : null;
  }
  /**
   * @returns {Entry[]}
   */
  function collectOperations() {
    /** @type {Entry[]} */
    var ops = [];
    Object.keys(spec.paths || {}).forEach(function (path) {
      var item = deref(spec.paths[path]).s;
      METHODS.forEach(function (method) {
        var op = item[method];
        if (!op) return;
        /** @type {Record<string, Json>} */
        var params = {};
        (item.parameters || []).concat(op.parameters || []).forEach(function (/** @type {Json} */ p) {
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

  /**
   * @param {Json[]} params
   */
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
  /**
   * @param {Json | undefined} content
   */
  function contentBlocks(content) {
    return Object.keys(content || {}).map(function (type) {
      var c = (content || {})[type] || {};
      return h('div', { class: 'content' }, h('p', { class: 'muted' }, type), c.schema ? schemaBlock(c.schema) : null);
    });
  }
  /**
   * @param {Json} resp
   * @returns {string[]}
   */
  function errorCodes(resp) {
    // Codes documented by examples (error.code) or by an x-error-codes extension.
    /** @type {string[]} */
    var codes = [].concat(resp['x-error-codes'] || []);
    Object.keys(resp.content || {}).forEach(function (type) {
      var c = resp.content[type] || {};
      var exs = [c.example].concat(Object.keys(c.examples || {}).map(function (k) { return deref(c.examples[k]).s.value; }));
      exs.forEach(function (e) { if (e && e.error && e.error.code && codes.indexOf(e.error.code) < 0) codes.push(e.error.code); });
    });
    return codes;
  }
  /**
   * @param {Json} op
   * @param {string} headingId
   */
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
  /**
   * @param {string} v
   * @param {Element} source
   */
  function storeKey(v, source) {
    try { if (v) localStorage.setItem(KEY_STORE, v); else localStorage.removeItem(KEY_STORE); } catch (e) { /* private mode */ }
    document.querySelectorAll('input.api-key').forEach(function (el) { if (el !== source) /** @type {HTMLInputElement} */ (el).value = v; });
  }
  /**
   * @param {Json} p
   * @param {string} id
   */
  function paramControl(p, id) {
    var s = deref(p.schema || {}).s;
    /** @type {Json[] | undefined} */
    var variants = s.anyOf || s.oneOf;
    if (variants) { var nn = variants.filter(notNull); if (nn.length === 1) s = deref(nn[0]).s; }
    var common = { id: id, name: p.name, 'data-in': p.in, required: p.required ? true : null };
    var values = s.enum || (hasType(s, 'boolean') ? [true, false] : null);
    if (values) {
      var sel = h('select', common, h('option', { value: '' }, p.required ? '— choose —' : '(not sent)'));
      values.forEach(function (/** @type {unknown} */ v) { sel.appendChild(h('option', { value: String(v) }, String(v))); });
      return sel;
    }
    var numeric = hasType(s, 'integer') || hasType(s, 'number');
    /** @type {Json} */
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
  /**
   * @param {Entry} e
   */
  function tryPanel(e) {
    var op = e.op, id = e.id;
    var keyId = id + '-key', result = h('div', { class: 'result', 'aria-live': 'polite' });
    /** @type {HTMLTextAreaElement | null} */
    var bodyEl = null;
    var form = h('form', { class: 'try-form', novalidate: true },
      h('div', { class: 'field' }, h('label', { for: keyId }, 'API key ', h('span', { class: 'muted' }, '(sent as ' + keyHeader + ', kept in this browser)')),
        h('input', { id: keyId, class: 'api-key', type: 'password', autocomplete: 'off', spellcheck: 'false', value: storedKey(),
          oninput: function (/** @type {InputEvent} */ ev) { var input = /** @type {HTMLInputElement} */ (ev.target); storeKey(input.value.trim(), input); } })),
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
  /**
   * @param {Entry} e
   * @param {HTMLElement} form
   * @param {HTMLTextAreaElement | null} bodyEl
   * @param {HTMLElement} result
   * @param {HTMLButtonElement} send
   */
  function call(e, form, bodyEl, result, send) {
    var path = e.path, query = new URLSearchParams();
    /** @type {Record<string, string>} */
    var headers = {};
    /** @type {string[]} */
    var missing = [];
    form.querySelectorAll('[data-in]').forEach(function (node) {
      var el = /** @type {HTMLInputElement | HTMLSelectElement} */ (node);
      var v = el.value.trim(), where = el.getAttribute('data-in');
      if (!v) { if (el.required) missing.push(el.name); return; }
      if (where === 'path') path = path.split('{' + el.name + '}').join(encodeURIComponent(v));
      else if (where === 'query') query.append(el.name, v);
      else if (where === 'header') headers[el.name] = v;
    });
    result.textContent = '';
    if (missing.length) { append(result, h('p', { class: 'problem', role: 'alert' }, 'Required: ' + missing.join(', '))); return; }
    var key = /** @type {HTMLInputElement} */ (form.querySelector('input.api-key')).value.trim();
    if (key) headers[keyHeader] = key;
    /** @type {RequestInit & { method: string }} */
    var init = { method: e.method.toUpperCase(), headers: headers, cache: 'no-store' };
    if (bodyEl && bodyEl.value.trim()) { init.body = bodyEl.value; headers['Content-Type'] = bodyEl.getAttribute('data-type') || 'application/json'; }
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
    /**
     * @param {Response} res
     * @param {string} text
     */
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
  /**
   * @param {Entry} e
   * @returns {Child[]}
   */
  function endpointHead(e) {
    return [h('span', { class: 'method m-' + e.method }, e.method.toUpperCase()), ' ',
      h('code', { class: 'path' }, e.path), ' ',
      h('span', { class: 'summary' }, e.op.summary || ''),
      e.credits ? h('span', { class: 'credits' }, e.credits) : null,
      e.op.deprecated ? h('span', { class: 'chip' }, 'deprecated') : null];
  }
  /**
   * @param {Entry} e
   */
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
  /** @returns {Group[]} */
  function groups() {
    /** @type {Record<string, Entry[]>} */
    var byTag = {};
    /** @type {string[]} */
    var order = [];
    (spec.tags || []).forEach(function (/** @type {Json} */ t) { if (t && t.name && !byTag[t.name]) { byTag[t.name] = []; order.push(t.name); } });
    entries.forEach(function (e) { if (!byTag[e.tag]) { byTag[e.tag] = []; order.push(e.tag); } byTag[e.tag].push(e); });
    return order.filter(function (t) { return byTag[t].length; }).map(function (t) {
      var meta = (spec.tags || []).filter(function (/** @type {Json} */ x) { return x && x.name === t; })[0] || {};
      /** @type {Group} */
      var group = { name: t, description: meta.description, entries: byTag[t] };
      return group;
    });
  }
  /**
   * @param {string} id
   */
  function open(id) {
    var el = id && document.getElementById(id);
    if (el && el instanceof HTMLDetailsElement) { el.open = true; el.scrollIntoView({ block: 'start' }); }
  }

  function render() {
    var info = spec.info || {};
    document.title = (info.title || 'API') + ' — documentation';
    var head = byId('info');
    head.textContent = '';
    append(head, [h('h1', null, info.title || 'API', ' ', info.version ? h('span', { class: 'version' }, 'v' + info.version) : null,
      spec.openapi ? h('span', { class: 'version oas' }, 'OpenAPI ' + spec.openapi) : null),
      info.description ? h('div', { class: 'desc' }, md(info.description)) : null,
      h('p', { class: 'muted' }, 'Authentication: send your API key in the ', h('code', null, keyHeader),
        ' header. The machine-readable description is at ', h('a', { href: '/v1/openapi.json' }, '/v1/openapi.json'), '.')]);

    var nav = byId('toc'), main = byId('endpoints');
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
    var box = /** @type {HTMLInputElement} */ (byId('search'));
    var words = box.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0;
    entries.forEach(function (e) {
      var hit = words.every(function (w) { return (e.haystack || '').indexOf(w) >= 0; });
      if (e.article) e.article.hidden = !hit;
      if (e.tocItem) e.tocItem.hidden = !hit;
      if (hit) shown++;
    });
    document.querySelectorAll('.tag-group').forEach(function (sec) {
      var arts = sec.querySelectorAll('.endpoint');
      if (arts.length) /** @type {HTMLElement} */ (sec).hidden = Array.prototype.every.call(arts, function (a) { return a.hidden; });
    });
    document.querySelectorAll('#toc > li').forEach(function (li) {
      /** @type {HTMLElement} */ (li).hidden = Array.prototype.every.call(li.querySelectorAll('li'), function (x) { return x.hidden; });
    });
    byId('count').textContent = words.length
      ? shown + ' of ' + entries.length + ' endpoints match'
      : entries.length + ' endpoints';
  }

  function start() {
    byId('search').addEventListener('input', filter);
    window.addEventListener('hashchange', function () { open(location.hash.slice(1)); });
    document.addEventListener('keydown', function (ev) {
      var target = /** @type {Element | null} */ (ev.target);
      var t = target && target.tagName;
      if (ev.key === '/' && t !== 'INPUT' && t !== 'TEXTAREA' && t !== 'SELECT') { ev.preventDefault(); byId('search').focus(); }
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
      var main = byId('endpoints');
      main.removeAttribute('aria-busy');
      main.textContent = '';
      append(main, h('p', { class: 'problem', role: 'alert' }, 'Could not load the API description /v1/openapi.json: ' + err.message));
    });
  }
  start();
})();
