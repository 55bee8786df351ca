// @ts-check
// The authorize page's behaviour (api/oauth/page.ts): posts the key holder's decision to /oauth/decision and follows
// the redirect the server answers with (to the client's registered redirect URI), or shows why it refused.
'use strict';
(function () {
  var form = /** @type {HTMLFormElement} */ (document.getElementById('authorize-form'));
  var status = /** @type {HTMLElement} */ (document.getElementById('status'));
  var deny = /** @type {HTMLButtonElement} */ (document.getElementById('deny'));
  var portfolio = /** @type {HTMLInputElement | null} */ (document.getElementById('portfolio'));

  /** @param {boolean} approve */
  async function decide(approve) {
    var fields = new FormData(form);
    /** @type {Record<string, unknown>} */
    var body = { approve: approve, portfolio: Boolean(portfolio && portfolio.checked) };
    fields.forEach(function (value, name) { body[name] = String(value); });
    if (!approve) delete body.api_key;
    status.className = 'muted';
    status.textContent = approve ? 'Checking the key…' : 'Denying…';
    var res = await fetch('/oauth/decision', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    var answer = await res.json().catch(function () { return null; });
    if (res.ok && answer && typeof answer.redirect_to === 'string') {
      status.textContent = approve ? 'Approved: returning to the client…' : 'Denied: returning to the client…';
      window.location.assign(answer.redirect_to);
      return;
    }
    status.className = 'error';
    status.textContent = answer && answer.error ? answer.error + ': ' + (answer.error_description || '') : 'HTTP ' + res.status;
  }

  form.addEventListener('submit', function (e) {
    e.preventDefault();
    void decide(true);
  });
  deny.addEventListener('click', function () {
    void decide(false);
  });
})();
