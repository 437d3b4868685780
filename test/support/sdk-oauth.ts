// The official SDK's OAuth client against Portico's authorization server, with fetch standing in for
// the browser: the client's state in memory (MemoryOAuthProvider) and the login and consent forms
// (signInAt).
import assert from "node:assert/strict";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { formOf, formPoster, REDIRECT_URI } from "./oauth.js";

/** The SDK's OAuth client state, in memory; the user agent is driven by fetch (signInAt). */
export class MemoryOAuthProvider implements OAuthClientProvider {
  information: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = "";
  authorizationUrl: URL | undefined;
  readonly redirectUrl = REDIRECT_URI;
  readonly clientMetadata: OAuthClientMetadata;

  constructor(clientName: string) {
    this.clientMetadata = {
      client_name: clientName,
      redirect_uris: [REDIRECT_URI],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }

  clientInformation = () => this.information;
  saveClientInformation = (info: OAuthClientInformationMixed) => void (this.information = info);
  tokens = () => this.saved;
  saveTokens = (tokens: OAuthTokens) => void (this.saved = tokens);
  redirectToAuthorization = (url: URL) => void (this.authorizationUrl = url);
  saveCodeVerifier = (verifier: string) => void (this.verifier = verifier);
  codeVerifier = () => this.verifier;
  /** What the SDK calls when the server no longer knows the client or its tokens (as real hosts do). */
  invalidateCredentials = (scope: "all" | "client" | "tokens" | "verifier" | "discovery") => {
    if (scope === "all" || scope === "client") this.information = undefined;
    if (scope === "all" || scope === "tokens") this.saved = undefined;
    if (scope === "all" || scope === "verifier") this.verifier = "";
  };
}

/** Signs `user` in at `issuer`'s authorization URL and consents, as a browser would; returns the code. */
export async function signInAt(
  issuer: string,
  url: URL,
  user: { username: string; password: string },
): Promise<string> {
  const page = await fetch(url, { redirect: "manual" });
  assert.equal(page.status, 200, "the login page");
  const form = formPoster(issuer, page.headers.get("set-cookie")!.split(";")[0]!);
  let back = await form("/oauth/login", { ...formOf(await page.text()), ...user });
  if (back.status === 200)
    back = await form("/oauth/consent", { ...formOf(await back.text()), decision: "allow" });
  assert.equal(back.status, 303);
  return new URL(back.headers.get("location")!).searchParams.get("code")!;
}
