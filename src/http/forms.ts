import type { Context } from 'koa';
import { InvalidRequest, UnsupportedMediaType } from '../../policies/errors.js';
import { readBody, urlEncodedPairs } from './request-body.js';

/**
 * THE FORMS OF OUR PAGES (sign-in, consent, sign-out, the portal): one reader for all of them.
 * A form is application/x-www-form-urlencoded (anything else: 415), within its size limit (413
 * while arriving), read strictly (src/http/request-body.ts); a field is given once unless the page
 * lets it repeat (a list of scopes, of redirect URIs). An empty field reads as absent.
 */
export class Form {
  readonly #fields = new Map<string, string[]>();

  constructor(pairs: Iterable<[string, string]>, repeatable: ReadonlySet<string> = NONE) {
    for (const [name, value] of pairs) {
      const values = this.#fields.get(name);
      if (values && !repeatable.has(name)) throw new InvalidRequest(`parameter '${name}' must not be provided twice`);
      if (values) values.push(value);
      else this.#fields.set(name, [value]);
    }
  }

  /** The field's value; undefined when absent or empty. */
  get(name: string): string | undefined {
    const value = this.#fields.get(name)?.[0];
    return value === '' ? undefined : value;
  }

  /**
   * Every value of a repeatable field, empty ones left out; with `keepEmpty`, every value as sent,
   * in order (a page whose inputs are told apart by their position: a list of URIs).
   */
  getAll(name: string, options: { keepEmpty?: boolean } = {}): string[] {
    const values = this.#fields.get(name) ?? [];
    return options.keepEmpty ? [...values] : values.filter((value) => value !== '');
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  /** Every field and value as sent, empty ones too (a form kept to be sent again, src/portal/reauth.ts). */
  entries(): Array<[string, string]> {
    return [...this.#fields].flatMap(([name, values]) => values.map((value): [string, string] => [name, value]));
  }

  /** The form's fields and values in order, as a query string would carry them. */
  toQuery(): string {
    return new URLSearchParams([...this.#fields].flatMap(([name, values]) => values.filter((value) => value !== '').map((value): [string, string] => [name, value]))).toString();
  }
}

const NONE: ReadonlySet<string> = new Set();

/**
 * A page's form from the request body.
 * @throws UnsupportedMediaType (415) for another media type; PayloadTooLarge (413) past `limit`;
 *   InvalidRequest for a malformed body or a field given twice that may not repeat.
 */
export async function readForm(ctx: Context, limit: number, repeatable?: ReadonlySet<string>): Promise<Form> {
  // RFC 9110 §8.3.1: media types are case-insensitive.
  if (ctx.request.type.toLowerCase() !== 'application/x-www-form-urlencoded') {
    throw new UnsupportedMediaType('the form must be application/x-www-form-urlencoded');
  }
  return new Form(urlEncodedPairs(await readBody(ctx, limit)), repeatable);
}
