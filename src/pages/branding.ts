import { z } from 'zod';
import type { Logger } from '../logger.js';
import { functionOf } from '../option-kinds.js';

/**
 * BRANDING: a product name, a logo and an accent colour on the pages of an app (sign-in, consent,
 * sign-out), per tenant. The rules keep the pages readable and strict:
 *
 * - the accent colour is `#rrggbb` with a contrast against white of at least MIN_CONTRAST (white
 *   text on the primary button; the colour as text, border and focus ring on white);
 * - the logo is an https URL (http only for localhost) or a path on our own origin; the page's CSP
 *   allows images from exactly that origin and nothing else;
 * - the product name is plain text (escaped), in the title and heading, and is the logo's alt text.
 */

/**
 * How a page looks for a tenant (option `branding`; docs/configuration.md, "Options", is its
 * reference): a product name, a logo and an accent colour.
 */
export type Branding = z.input<typeof brandingSchema>;

/** The `branding` option: one branding, or one per tenant (`undefined`: the platform's own apps). */
export type BrandingOption =
  | Branding
  | ((tenant: string | undefined) => Branding | undefined | Promise<Branding | undefined>);

/** A branding that passed the rules, with the CSP source of its logo. */
export interface CheckedBranding {
  productName?: string;
  logoUrl?: string;
  /** `'self'` or the logo's origin. */
  logoSource?: string;
  accentColor?: string;
}

const MIN_CONTRAST = 4.5;
const MAX_PRODUCT_NAME = 80;
const MAX_LOGO_URL = 2048;

/** A static branding is checked here; a function's answers when a page is rendered (Brands). */
const brandingSchema = z
  .object({ productName: z.string().optional(), logoUrl: z.string().optional(), accentColor: z.string().optional() })
  .strict()
  .superRefine((branding, ctx) => {
    for (const { field, message } of brandingProblems(branding)) ctx.addIssue({ code: 'custom', path: [field], message });
  });

/** The `branding` option, as createAuthServer validates it. */
export const brandingOptionSchema = z
  .union([functionOf<Exclude<BrandingOption, Branding>>('a function of the tenant'), brandingSchema])
  .optional()
  .meta({
    description: '`{ productName?, logoUrl?, accentColor? }` for every app, or `(tenant) => Branding | undefined` (may be async; '
      + "`undefined` tenant: the platform's own apps) for the sign-in, consent and sign-out pages of an app. `accentColor` is "
      + `\`#rrggbb\` with a contrast of at least ${MIN_CONTRAST}:1 against white, \`logoUrl\` is https (http only for `
      + '`localhost`/`127.0.0.1`) to a plain host name (letters, digits, `-`, `.`) or a path on our origin, at most '
      + `${MAX_LOGO_URL.toLocaleString('en-US')} characters, \`productName\` 1 to ${MAX_PRODUCT_NAME} characters; a static branding `
      + 'breaking a rule is refused at start. See [languages and branding](#languages-and-branding)',
  });

/** A DNS host name: labels of letters, digits and inner hyphens (an IDN in its xn-- form). */
const PLAIN_HOST = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

function channel(hex: string): number {
  const value = Number.parseInt(hex, 16) / 255;
  return value <= 0.04045 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
}

/** The contrast ratio of a `#rrggbb` colour against white (1 to 21). */
export function contrastWithWhite(color: string): number {
  const [r, g, b] = [color.slice(1, 3), color.slice(3, 5), color.slice(5, 7)].map(channel) as [number, number, number];
  const luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  return 1.05 / (luminance + 0.05);
}

/** What is wrong with an accent colour, or undefined when it may be used. */
export function accentColorProblem(color: string): string | undefined {
  if (!/^#[0-9a-fA-F]{6}$/.test(color)) return 'must be a colour like #1f5fcf';
  const ratio = contrastWithWhite(color);
  if (ratio < MIN_CONTRAST) {
    return `${color} has a contrast of ${ratio.toFixed(2)}:1 against white; at least ${MIN_CONTRAST}:1 is needed (choose a darker colour)`;
  }
  return undefined;
}

/** The CSP source a logo URL needs (`'self'` for a path), or what is wrong with it. */
export function logoSource(url: string): { source: string } | { problem: string } {
  if (url.length > MAX_LOGO_URL) return { problem: `must be at most ${MAX_LOGO_URL} characters` };
  if (/^\/(?!\/)/.test(url)) {
    return /[\s\\]/.test(url) ? { problem: 'a path must not hold spaces or backslashes' } : { source: "'self'" };
  }
  const parsed = URL.parse(url);
  if (!parsed || parsed.username || parsed.password) return { problem: 'must be an https URL or a path starting with /' };
  const https = parsed.protocol === 'https:';
  if (!https && !(parsed.protocol === 'http:' && (parsed.hostname === 'localhost' || parsed.hostname === '127.0.0.1'))) {
    return { problem: 'must be https (http only for localhost) or a path starting with /' };
  }
  // The origin goes into the page's Content-Security-Policy header as it is: a plain host name,
  // nothing a header or a policy would read as syntax (`;`, `*`, quotes, spaces).
  if (!PLAIN_HOST.test(parsed.hostname)) return { problem: 'must name a plain host (letters, digits, - and .)' };
  return { source: parsed.origin };
}

/** The problems of a branding, each with the field it is about; empty when it may be used. */
export function brandingProblems(branding: Branding): Array<{ field: keyof Branding; message: string }> {
  const problems: Array<{ field: keyof Branding; message: string }> = [];
  const { productName, logoUrl, accentColor } = branding;
  if (productName !== undefined && (typeof productName !== 'string' || !productName.trim() || productName.length > MAX_PRODUCT_NAME)) {
    problems.push({ field: 'productName', message: `must be a text of 1 to ${MAX_PRODUCT_NAME} characters` });
  }
  if (logoUrl !== undefined) {
    const checked = typeof logoUrl === 'string' ? logoSource(logoUrl) : { problem: 'must be a string' };
    if ('problem' in checked) problems.push({ field: 'logoUrl', message: checked.problem });
  }
  if (accentColor !== undefined) {
    const problem = typeof accentColor === 'string' ? accentColorProblem(accentColor) : 'must be a string';
    if (problem) problems.push({ field: 'accentColor', message: problem });
  }
  return problems;
}

/** The fields of a branding that pass the rules (the others are left out: the default look). */
function checked(branding: Branding): { branding: CheckedBranding; problems: string[] } {
  const problems = brandingProblems(branding);
  const bad = new Set(problems.map(({ field }) => field));
  const result: CheckedBranding = {};
  if (branding.productName !== undefined && !bad.has('productName')) result.productName = branding.productName.trim();
  if (branding.logoUrl !== undefined && !bad.has('logoUrl')) {
    const source = logoSource(branding.logoUrl);
    if ('source' in source) Object.assign(result, { logoUrl: branding.logoUrl, logoSource: source.source });
  }
  if (branding.accentColor !== undefined && !bad.has('accentColor')) result.accentColor = branding.accentColor.toLowerCase();
  return { branding: result, problems: problems.map(({ field, message }) => `${field}: ${message}`) };
}

/** Tenants warned about: each once (bounded, so that tenants without end cannot grow it). */
const MAX_WARNED = 1000;

/**
 * The branding of a page, from the option: a static one (checked at option validation) or the
 * host's function, whose answer is checked on every call: a field that breaks the rules is left
 * out (the default look) with a warning, once per tenant; a function that throws gives no branding.
 */
export class Brands {
  readonly #warned = new Set<string>();

  constructor(
    private readonly option: BrandingOption | undefined,
    private readonly logger: Logger,
  ) {}

  async of(tenant: string | undefined): Promise<CheckedBranding | undefined> {
    const { option } = this;
    if (option === undefined) return undefined;
    let given: Branding | undefined;
    try {
      given = typeof option === 'function' ? await option(tenant) : option;
    } catch (error) {
      this.#warnOnce(tenant, 'the branding function failed; the default look is used', { error: (error as Error)?.name ?? 'Error' });
      return undefined;
    }
    if (given === undefined || given === null) return undefined;
    if (typeof given !== 'object') {
      this.#warnOnce(tenant, 'the branding function returned no object; the default look is used', {});
      return undefined;
    }
    const result = checked(given);
    if (result.problems.length) {
      this.#warnOnce(tenant, 'a branding breaks the rules; those fields take the default', { problems: result.problems });
    }
    return result.branding;
  }

  #warnOnce(tenant: string | undefined, message: string, fields: Record<string, unknown>): void {
    const key = tenant ?? '(platform)';
    if (this.#warned.has(key) || this.#warned.size >= MAX_WARNED) return;
    this.#warned.add(key);
    this.logger.warn(message, { tenant: key, ...fields });
  }
}
