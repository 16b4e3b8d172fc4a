import { createHash, randomBytes } from 'node:crypto';

/** RFC 7636 verifier + S256 challenge, fresh per request. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export interface Step {
  status: number;
  url: string;
  /** Where a redirect pointed, when it left the server (the app's redirect URI). */
  location?: string;
  html: string;
}

/**
 * A minimal browser over fetch for HTTP tests: keeps cookies, follows redirects within the
 * server, stops at the first redirect that leaves it, and submits the forms of our pages.
 */
export class UserAgent {
  private readonly cookies = new Map<string, string>();
  /** Every Set-Cookie header received, as sent (attributes included). */
  readonly setCookieHeaders: string[] = [];
  /** Every URL requested, redirects followed included, in order. */
  readonly visited: string[] = [];

  /** `headers` go with every request (e.g. an X-Forwarded-For behind a trusted proxy). */
  constructor(
    private readonly origin: string,
    private readonly headers: Record<string, string> = {},
  ) {}

  private remember(response: Response): void {
    for (const header of response.headers.getSetCookie()) {
      this.setCookieHeaders.push(header);
      const [pair] = header.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (/expires=Thu, 01 Jan 1970/i.test(header) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  /** The value of a cookie the agent holds. */
  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  private cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async request(url: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<Step> {
    let target = new URL(url, this.origin).href;
    let method = init.method ?? 'GET';
    let body = init.body;
    for (let hops = 0; hops < 10; hops += 1) {
      this.visited.push(target);
      const response = await fetch(target, {
        method,
        redirect: 'manual',
        headers: {
          cookie: this.cookieHeader(),
          accept: 'text/html',
          ...this.headers,
          ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded', origin: this.origin } : {}),
          ...init.headers,
        },
        ...(body !== undefined ? { body } : {}),
      });
      this.remember(response);
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        const next = new URL(location, target);
        if (next.origin !== this.origin) return { status: response.status, url: target, location: next.href, html: '' };
        target = next.href;
        method = 'GET';
        body = undefined;
        continue;
      }
      return { status: response.status, url: target, html: await response.text() };
    }
    throw new Error('too many redirects');
  }

  /**
   * Submits the page's form with its hidden fields plus `fields` (the button is a field too): a
   * POST, or a GET whose fields become the query (a GET that leaves the server is only its location).
   */
  submit(step: Step, fields: Record<string, string>): Promise<Step> {
    const found = /<form(?: method="(get|post)")?[^>]*action="([^"]+)"/.exec(step.html);
    const [, method = 'post', action] = found ?? [];
    if (!found || !action) throw new Error(`no form on the page:\n${step.html}`);
    const unescape = (value: string) => value.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
    // The hidden fields of that form only (a page may hold several forms, as a browser sends one).
    const end = step.html.indexOf('</form>', found.index);
    const formHtml = step.html.slice(found.index, end === -1 ? undefined : end);
    const hidden = [...formHtml.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)];
    const form = new URLSearchParams(hidden.map(([, name, value]): [string, string] => [unescape(name!), unescape(value!)]));
    for (const [name, value] of Object.entries(fields)) form.set(name, value);
    if (method === 'get') {
      const target = new URL(unescape(action), step.url);
      target.search = form.toString();
      if (target.origin !== this.origin) return Promise.resolve({ status: 0, url: step.url, location: target.href, html: '' });
      return this.request(target.href);
    }
    return this.request(unescape(action), { method: 'POST', body: form.toString() });
  }
}
