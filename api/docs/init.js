// Starts Swagger UI (swagger-ui-dist, loaded just before by /docs/swagger-ui-bundle.js) on the API's own OpenAPI
// document. A file rather than an inline script so that the page's CSP keeps `script-src 'self'`.
/* global SwaggerUIBundle */
window.ui = SwaggerUIBundle({
  url: '/v1/openapi.json',
  dom_id: '#swagger-ui',
  // BaseLayout: no top bar, whose box would let a visitor load any other document from any URL.
  layout: 'BaseLayout',
  presets: [SwaggerUIBundle.presets.apis],
  // The document is ours and fixed: never take a `?url=` or `?configUrl=` from the address bar.
  queryConfigEnabled: false,
  // No badge fetched from validator.swagger.io: nothing leaves the machine.
  validatorUrl: null,
  deepLinking: true,
  filter: true,
  displayRequestDuration: true,
  // The key typed in the Authorize dialog stays in this browser's localStorage across reloads.
  persistAuthorization: true,
});
