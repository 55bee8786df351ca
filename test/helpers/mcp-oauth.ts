// The SDK MCP client's OAuth side for the tests (OAuthClientProvider), in memory: a public client (PKCE, no secret)
// with one redirect URI; the authorization URL it is sent to is kept for the test to open (by HTTP or in a browser).
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

export const TEST_REDIRECT = 'http://localhost:8976/callback';

export class MemoryOAuthClient implements OAuthClientProvider {
  info?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = '';
  authorizationUrl?: URL;

  constructor(
    readonly name: string,
    readonly stateValue: string,
  ) {}

  get redirectUrl() {
    return TEST_REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: this.name, redirect_uris: [TEST_REDIRECT], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  state() {
    return this.stateValue;
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}
