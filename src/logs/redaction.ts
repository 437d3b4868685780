// What keeps secrets out of log lines whatever their level (docs/security.md, "Secret-free logs"):
// URL query and fragment parameters and JSON members named like a secret, credentials in URLs,
// and Authorization-style values are replaced by "[redacted]" — in the request serializer, and in
// every finished line (error messages and stacks included) just before it is written.

export const REDACTED = "[redacted]";

/**
 * Words that make any name a secret's: `client_secret`, `x-upstream-token`, `Proxy-Authorization`;
 * the console's `X-Portico-CSRF` and try it's `X-Portico-Internal-Caller` pass (docs/admin-api.md).
 */
const SECRET_WORD =
  /secret|passw|pwd|token|credential|assertion|cookie|authori[sz]ation|signature|api[-_]?key|private[-_]?key|code[-_]?verifier|csrf|internal[-_]?caller|[-_.]key(?:$|[-_.])|^key[-_.]/i;
/** `signingKey`, `apiKey`: a camelCase name ending in Key. */
const CAMEL_KEY = /[a-z0-9]Key$/;
/** Short names that are secrets as query, fragment or form parameters (OAuth codes and state, signatures, keys). */
const SECRET_PARAM = /^(?:code|state|nonce|key|sig|session|session[-_]?id|jwt|otp|ticket|auth)$/i;
/** Names that merely mention a secret: where it goes or what kind it is, never its value. */
const NOT_A_SECRET =
  /(?:url|uri|endpoint|type|types|hint|method|methods|count|ttl|seconds|expires_in|expiresin)$/i;

/** True for a parameter or header name whose value must never be logged. */
export function isSecretParam(name: string): boolean {
  return (SECRET_PARAM.test(name) || isSecretMember(name)) && !NOT_A_SECRET.test(name);
}

/** JSON members: as parameters, but `code`, `key` and `session` are error codes, store keys and session refs. */
function isSecretMember(name: string): boolean {
  return (SECRET_WORD.test(name) || CAMEL_KEY.test(name)) && !NOT_A_SECRET.test(name);
}

/** `name=value` after `?`, `&`, `#` or `;`; in a line, also at the start of a string or word. */
const PARAM = /(^|[?&#;])([^=&#;?\s]+)=([^&#;\s]*)/g;
/** A name may be percent-encoded (`access%5Ftoken`): the server that reads it decodes it. */
const LINE_PARAM = /(^|[?&#;\s"'(,[{]|\\[nrt]|\\u0026)([A-Za-z0-9_.\-[\]%]+)=([^&#;\s"\\]*)/g;
/** The same inside a percent-encoded URL (a redirect_uri carrying its own query). */
const ENCODED_PARAM =
  /(%3[fF]|%26|%23)([A-Za-z0-9_.\-[\]]+)(%3[dD])((?:[^&#;\s"\\%]|%(?!26|23|3[fF])[0-9a-fA-F]{2})*)/g;
/** `"name":"value"` members, and the same escaped inside a string (`\"name\":\"value\"`). */
const MEMBER = /("([^"\\]{1,64})":\s*")((?:[^"\\]|\\.)*)"/g;
const ESCAPED_MEMBER = /(\\"([^"\\]{1,64})\\"\s*:\s*\\")((?:[^"\\]|\\[^"])*)\\"/g;
/**
 * `X-Api-Key: value` as an HTTP message or a dump of one shows a header (an upstream echoing the
 * request into its error text): the value up to the next header, the end of the line or of the
 * string, since a cookie or a scheme-prefixed credential holds spaces and a collapsed dump puts
 * every header on one line.
 */
const HEADER_LINE =
  /(^|\\[nr]|[\s"'({[,])([A-Za-z][A-Za-z0-9_-]{0,63}):(?:[ ]|\\t)+((?:[^"\\]|\\[^nr"])+?)(?=\s{1,4}[A-Za-z][A-Za-z0-9_-]{0,63}:[ ]|\\[nr]|"|$)/g;
/** `scheme://user:password@host`. */
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"\\]+@/gi;
/** `Bearer abc…` wherever it is written out (an upstream echoing a request, an error message). */
/** `JWSSignatureVerificationFailed: …`, `TokenError: …`: an error's name before its message, not a header. */
const ERROR_NAME = /(?:error|exception|failed|invalid|expired)$/i;
const AUTH_SCHEME = /\b(Bearer|Basic|DPoP)(\s+|(?:\\t)+)[A-Za-z0-9._~+/=-]{8,}/gi;

const nameOf = (raw: string): string => {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
};

/** A URL (absolute or a path) with its secret parameters and userinfo redacted. */
export function redactUrl(url: string): string {
  if (!url.includes("=") && !url.includes("@")) return url;
  return url
    .replace(USERINFO, `$1${REDACTED}@`)
    .replace(PARAM, (all, lead: string, name: string) =>
      isSecretParam(nameOf(name)) ? `${lead}${name}=${REDACTED}` : all,
    )
    .replace(ENCODED_PARAM, (all, lead: string, name: string, eq: string) =>
      isSecretParam(name) ? `${lead}${name}${eq}${REDACTED}` : all,
    );
}

/** Incoming headers with every credential-bearing one redacted (a copy; the request keeps its own). */
export function redactHeaders(headers: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  // Header names arrive lower-cased, so `X-Signing-Key` and `X-SigningKey` both end in "key".
  for (const [name, value] of Object.entries(headers))
    copy[name] = isSecretParam(name) || name.endsWith("key") ? REDACTED : value;
  return copy;
}

/** A finished JSON log line with every secret that has a recognisable shape redacted. */
export function redactLine(line: string): string {
  return line
    .replace(USERINFO, `$1${REDACTED}@`)
    .replace(LINE_PARAM, (all, lead: string, name: string) =>
      isSecretParam(nameOf(name)) ? `${lead}${name}=${REDACTED}` : all,
    )
    .replace(ENCODED_PARAM, (all, lead: string, name: string, eq: string) =>
      isSecretParam(name) ? `${lead}${name}${eq}${REDACTED}` : all,
    )
    .replace(MEMBER, (all, open: string, name: string) =>
      isSecretMember(name) && !all.endsWith(`${REDACTED}"`) ? `${open}${REDACTED}"` : all,
    )
    .replace(ESCAPED_MEMBER, (all, open: string, name: string) =>
      isSecretMember(name) ? `${open}${REDACTED}\\"` : all,
    )
    .replace(HEADER_LINE, (all, lead: string, name: string) =>
      isSecretMember(name) && !ERROR_NAME.test(name) ? `${lead}${name}: ${REDACTED}` : all,
    )
    .replace(AUTH_SCHEME, `$1$2${REDACTED}`);
}
