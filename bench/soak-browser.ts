/**
 * The soak's browser: a cookie jar over fetch that follows redirects within the server, stops at
 * the first one that leaves it (the app's redirect URI), and submits the forms of our pages with
 * their hidden fields (the CSRF token among them). The instances share one public base URL; each
 * request goes to the instance it is given (`via`, its own origin), as a load balancer would send
 * it, with the public origin in the URL's path's place: one cookie jar for every instance.
 */

/** One page or redirect the browser got to. */
export interface Page {
  status: number;
  url: string;
  /** Where a redirect pointed when it left the server (the app's redirect URI). */
  location?: string;
  html: string;
}

/** A request that got no answer in time, or no answer at all. */
export class NoAnswer extends Error {
  constructor(readonly reason: 'timeout' | 'network') {
    super(reason);
  }
}

const MAX_REDIRECTS = 10;

/** Sends a request with a deadline; a timeout or a network failure becomes a NoAnswer. */
export async function fetchWithin(url: string, init: RequestInit, timeoutMs: number): Promise<Response> {
  try {
    return await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    const name = error instanceof Error ? error.name : '';
    throw new NoAnswer(name === 'TimeoutError' || name === 'AbortError' ? 'timeout' : 'network');
  }
}

/** `url` (of the public base URL) sent to the instance listening at `via`. */
export function atInstance(url: string, via: string): string {
  const { pathname, search } = new URL(url);
  return `${via}${pathname}${search}`;
}

/** The body of an answer; one cut by the deadline or the connection is a NoAnswer too. */
export async function textOf(response: Response): Promise<string> {
  try {
    return await response.text();
  } catch (error) {
    throw new NoAnswer(error instanceof Error && error.name === 'TimeoutError' ? 'timeout' : 'network');
  }
}

const unescape = (value: string) =>
  value.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

export class SoakBrowser {
  private readonly cookies = new Map<string, string>();

  /** `address`: the browser's own address, sent as X-Forwarded-For (the servers trust it in the soak). */
  constructor(
    readonly address: string,
    private readonly timeoutMs: number,
  ) {}

  private remember(response: Response): void {
    for (const header of response.headers.getSetCookie()) {
      const [pair = ''] = header.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (/expires=Thu, 01 Jan 1970/i.test(header) || /max-age=0\b/i.test(header) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  /**
   * GET `url` (or POST a form body) at the instance listening at `via`, and follow the redirects
   * that stay on the url's origin, at the same instance.
   */
  async open(url: string, via: string, body?: string): Promise<Page> {
    let target = url;
    let method = body === undefined ? 'GET' : 'POST';
    let form = body;
    for (let hops = 0; hops < MAX_REDIRECTS; hops += 1) {
      const origin = new URL(target).origin;
      const response = await fetchWithin(atInstance(target, via), {
        method,
        redirect: 'manual',
        headers: {
          accept: 'text/html',
          'x-forwarded-for': this.address,
          ...(this.cookies.size > 0 ? { cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ') } : {}),
          ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded', origin }),
        },
        ...(form === undefined ? {} : { body: form }),
      }, this.timeoutMs);
      this.remember(response);
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        await response.body?.cancel();
        const next = new URL(location, target);
        if (next.origin !== origin) return { status: response.status, url: target, location: next.href, html: '' };
        target = next.href;
        method = 'GET';
        form = undefined;
        continue;
      }
      return { status: response.status, url: target, html: await textOf(response) };
    }
    throw new Error('too many redirects');
  }

  /** Submits the page's first form (POST) with its hidden fields and `fields`, at the instance at `via`. */
  submit(page: Page, fields: Record<string, string>, via: string): Promise<Page> {
    const found = /<form(?: method="(get|post)")?[^>]*action="([^"]+)"/.exec(page.html);
    if (!found || !found[2] || found[1] === 'get') throw new Error(`no form to post on the page (status ${page.status})`);
    const end = page.html.indexOf('</form>', found.index);
    const formHtml = page.html.slice(found.index, end === -1 ? undefined : end);
    const hidden = [...formHtml.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)];
    const form = new URLSearchParams(hidden.map(([, name = '', value = '']): [string, string] => [unescape(name), unescape(value)]));
    for (const [name, value] of Object.entries(fields)) form.set(name, value);
    return this.open(new URL(unescape(found[2]), page.url).href, via, form.toString());
  }
}
