import { ValidationError } from './errors.js';

/**
 * REDIRECT URIS: where a code may be sent.
 *
 * - Registration: https URIs; http only for loopback hosts (a native app's local listener);
 *   custom-scheme deep links of mobile apps in `scheme://` form. Refused: fragments, wildcards,
 *   userinfo, whitespace, backslashes, dot segments, schemes that run code or read files, network
 *   and browser-internal schemes, ports outside 1..65535, URIs over 2000 characters.
 * - Authorization and token time: the `redirect_uri` of a request must equal a registered one
 *   exactly, string for string (no port latitude for loopback, no normalisation): what is
 *   compared is what was registered (RFC 9700 §2.1).
 * - Every authorization request names its `redirect_uri`, even for an app with one.
 * - Post-logout redirect URIs (where a sign-out may send the browser back) follow the same rules
 *   and the same exact match. Back-channel logout URIs (a server endpoint we post a logout token
 *   to) start from these rules: policies/backchannel-logout.ts.
 */

/** Why a redirect URI was refused: the rule, in words. */
export type RedirectUriVerdict = { ok: true; kind: 'https' | 'loopback' | 'deep-link' } | { ok: false; rule: string };

const MAX_LENGTH = 2000;
/* RFC 3986 §3.1: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) */
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
/** Schemes that run code or read local files in the browser: refused. */
const FORBIDDEN_SCHEMES = new Set(['file', 'javascript', 'data', 'blob', 'vbscript']);
/**
 * Schemes that name a network protocol or a browser's own pages rather than an app: a code sent
 * there would go to a server or extension nobody registered as an app (ws://evil.example), or be
 * handled by the browser itself. A deep link is an app's own scheme: reverse-DNS private-use
 * schemes (RFC 8252 §7.1, com.example.app://) and other custom schemes stay accepted.
 */
const NETWORK_OR_BROWSER_SCHEMES = new Set([
  'ws', 'wss', 'ftp', 'ftps', 'sftp', 'ssh', 'telnet', 'gopher', 'ldap', 'ldaps', 'smb', 'nfs', 'irc', 'ircs',
  'mailto', 'tel', 'sms', 'news', 'nntp', 'rtsp', 'sip', 'sips', 'xmpp', 'git', 'svn', 'redis', 'rediss',
  'intent', 'android-app', 'about', 'view-source', 'chrome', 'chrome-extension', 'chrome-untrusted', 'edge',
  'moz-extension', 'resource', 'jar', 'safari-extension', 'safari-web-extension', 'ms-browser-extension',
  'opera', 'brave', 'devtools', 'filesystem', 'ws+unix', 'wyciwyg',
]);
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1']);
const HOSTNAME = /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$|^\[[0-9a-f:.]+\]$/i;

function refuse(rule: string): RedirectUriVerdict {
  return { ok: false, rule };
}

/** The authority between `scheme://` and the path, as written (the URL parser would normalise it). */
function writtenAuthority(uri: string, schemeLength: number): string {
  const rest = uri.slice(schemeLength + 3);
  const end = rest.search(/[/?#]/);
  return end === -1 ? rest : rest.slice(0, end);
}

/** RFC 3986 port as written: digits only, 1..65535, or omitted. */
function portProblem(authority: string): string | undefined {
  const match = /:([^:\]]*)$/.exec(authority);
  if (!match) return undefined;
  const port = match[1]!;
  if (port === '') return 'an empty port is not allowed';
  if (!/^\d+$/.test(port)) return 'the port must be a number';
  const value = Number(port);
  return value >= 1 && value <= 65535 ? undefined : 'the port must be between 1 and 65535';
}

/**
 * Redirect URI validation, applied before an app registration is accepted: a code is sent to these
 * URIs, so each must name exactly one place the app controls.
 * Accepted: https://host/..., http://localhost[:port]/..., http://127.0.0.1[:port]/..., and
 * custom deep links scheme://... . Refused: userinfo, plain http elsewhere, ports outside
 * 1..65535, custom schemes not in scheme://... form, file/javascript/data/blob (any case),
 * network and browser-internal schemes (ws, ftp, intent, chrome-extension, mailto, ...),
 * fragments (RFC 6749 §3.1.2), wildcards, whitespace, and dot segments in http(s) paths.
 */
export function checkRedirectUri(uri: unknown): RedirectUriVerdict {
  if (typeof uri !== 'string' || uri.length === 0) return refuse('must be a non-empty string');
  if (uri.length > MAX_LENGTH) return refuse(`must be at most ${MAX_LENGTH} characters`);
  // eslint-disable-next-line no-control-regex -- control characters are what this rule refuses
  if (/[\s\x00-\x1f\x7f\\]/.test(uri)) return refuse('must not contain whitespace, control characters or backslashes');
  const schemeMatch = SCHEME.exec(uri);
  if (!schemeMatch) return refuse('must start with a scheme, e.g. https://');
  const scheme = schemeMatch[1]!.toLowerCase();
  if (FORBIDDEN_SCHEMES.has(scheme)) return refuse(`the ${scheme}: scheme is not allowed`);
  if (NETWORK_OR_BROWSER_SCHEMES.has(scheme)) {
    return refuse(`the ${scheme}: scheme is a network or browser scheme, not an app's; use https or the app's own scheme`);
  }
  // RFC 6749 §3.1.2: the redirection endpoint URI MUST NOT include a fragment component.
  if (uri.includes('#')) return refuse('must not contain a fragment (#)');
  if (uri.slice(scheme.length + 1, scheme.length + 3) !== '//') {
    return refuse('must have the form scheme://... (custom schemes included)');
  }
  if (uri.includes('*')) return refuse('must not contain wildcards');
  const authority = writtenAuthority(uri, scheme.length);
  if (authority.includes('@')) return refuse('must not contain user information (user:password@)');
  const portIssue = portProblem(authority);
  if (portIssue) return refuse(portIssue);

  if (scheme !== 'http' && scheme !== 'https') {
    return URL.canParse(uri) ? { ok: true, kind: 'deep-link' } : refuse('is not a valid URI');
  }
  if (!URL.canParse(uri)) return refuse('is not a valid URI');
  const host = authority.replace(/:\d+$/, '');
  if (!host || !HOSTNAME.test(host)) return refuse('must have a valid host name');
  const path = uri.slice(scheme.length + 3 + authority.length).split(/[?]/)[0]!;
  const segments = path.split('/').map((segment) => segment.replace(/%2e/gi, '.'));
  if (segments.some((segment) => segment === '.' || segment === '..')) {
    return refuse('must not contain . or .. path segments');
  }
  if (scheme === 'https') return { ok: true, kind: 'https' };
  // The host as written: the URL parser would turn 127.1 or 0x7f.1 into 127.0.0.1.
  if (LOOPBACK_HOSTS.has(host.toLowerCase())) return { ok: true, kind: 'loopback' };
  return refuse('plain http is allowed only for localhost and 127.0.0.1; use https');
}

/**
 * Registration time: every URI must pass; the error names the URI and the rule it broke.
 * `allowNone`: an empty list is accepted (post-logout redirect URIs are optional).
 */
export function validateRedirectUris(uris: readonly unknown[], field = 'redirectUris', allowNone = false): string[] {
  if (uris.length === 0 && !allowNone) throw new ValidationError(field, 'at least one redirect URI is required');
  uris.forEach((uri, index) => {
    const verdict = checkRedirectUri(uri);
    if (!verdict.ok) throw new ValidationError(`${field}.${index}`, `'${String(uri)}' ${verdict.rule}`);
  });
  return [...new Set(uris as string[])];
}

/** Whether every URI is https: the condition for turning PKCE off on a confidential app. */
export function allHttps(uris: readonly string[]): boolean {
  return uris.every((uri) => checkRedirectUri(uri).ok && /^https:/i.test(uri));
}

/**
 * Use time (authorize and token requests): the URI must be one of the registered strings exactly:
 * no leniency for trailing slashes, case, ports (not even loopback ports), query or normalisation.
 */
export function redirectUriMatches(registered: readonly string[], presented: unknown): boolean {
  return typeof presented === 'string' && registered.includes(presented);
}
