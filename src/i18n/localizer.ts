import { z } from 'zod';
import { de } from './messages/de.js';
import { en, type Messages } from './messages/en.js';
import { fr } from './messages/fr.js';
import { checkedAs } from '../option-kinds.js';
import { languageTagSchema, negotiateLocale } from './locale.js';

/** A page's language: its tag (for `<html lang>`) and its texts. */
export interface PageLocale {
  lang: string;
  t: Messages;
}

/** The languages we ship. */
export const BUILT_IN_MESSAGES: Readonly<Record<string, Messages>> = { en, de, fr };

/** A host's texts for one language: only names of ours, each a text or a function like ours. */
const hostMessages = checkedAs<Partial<Messages>>(z.record(z.string(), z.unknown()).superRefine((given, ctx) => {
  for (const [key, value] of Object.entries(given)) {
    if (!Object.hasOwn(en, key)) {
      ctx.addIssue({ code: 'custom', path: [key], message: 'is not a text of the pages (see Messages)' });
      continue;
    }
    const kind = typeof en[key as keyof Messages];
    if (value !== undefined && typeof value !== kind) ctx.addIssue({ code: 'custom', path: [key], message: `must be a ${kind === 'function' ? 'function' : 'string'}` });
  }
}));

const i18nSchema = z
  .object({
    messages: z.record(languageTagSchema, hostMessages).optional(),
    defaultLocale: languageTagSchema.optional(),
  })
  .strict()
  .superRefine((i18n, ctx) => {
    if (i18n.defaultLocale === undefined) return;
    const tags = [...Object.keys(BUILT_IN_MESSAGES), ...Object.keys(i18n.messages ?? {})].map((tag) => tag.toLowerCase());
    if (!tags.includes(i18n.defaultLocale.toLowerCase())) {
      ctx.addIssue({ code: 'custom', path: ['defaultLocale'], message: `"${i18n.defaultLocale}" has no texts: use en, de, fr or a language of i18n.messages` });
    }
  });

/** The `i18n` option, checked at start: unknown text names and a text where a function is due are refused. */
export const i18nOptionSchema = i18nSchema.optional().meta({
  description: '`{ messages?: { [tag]: Partial<Messages> }, defaultLocale?: tag }`: add a language (its missing texts in English) '
    + 'or override texts of ours (`en`, `de`, `fr`); `defaultLocale` (default `en`) is served when nothing the request or the '
    + 'browser asks for is available. Unknown text names and a text where a function is due are refused at start. See '
    + '[languages and branding](#languages-and-branding)',
  absent: 'English, German, French',
});

/**
 * The `i18n` option (docs/configuration.md, "Options", is its reference): texts the host adds or
 * overrides per language tag, and the language served when nothing the request or the browser
 * asks for is available.
 */
export type I18nOptions = z.input<typeof i18nSchema>;

/**
 * The languages of our pages, ours and the host's, and the choice of one per request
 * (src/i18n/locale.ts). Built once from the validated options.
 */
export class Localizer {
  readonly #messages = new Map<string, Messages>();
  readonly #default: string;
  /** The language tags served, ours first: what discovery advertises as `ui_locales_supported`. */
  readonly available: readonly string[];

  constructor(options: I18nOptions = {}) {
    for (const [tag, messages] of Object.entries(BUILT_IN_MESSAGES)) this.#messages.set(tag, messages);
    for (const [tag, given] of Object.entries(options.messages ?? {})) {
      const known = [...this.#messages.keys()].find((existing) => existing.toLowerCase() === tag.toLowerCase());
      const base = known ? this.#messages.get(known)! : en;
      // Only what the host gave: an explicit undefined must not blank a text.
      const defined = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined));
      this.#messages.set(known ?? tag, { ...base, ...defined });
    }
    this.available = [...this.#messages.keys()];
    this.#default = this.available.find((tag) => tag.toLowerCase() === options.defaultLocale?.toLowerCase()) ?? 'en';
  }

  /** The texts of a language we serve (the default language's for any other tag). */
  messages(lang: string): Messages {
    return this.#messages.get(lang) ?? this.#messages.get(this.#default)!;
  }

  /** The language of a page: `ui_locales` first, then `Accept-Language`, then the default. */
  choose(request: { uiLocales?: unknown; acceptLanguage?: string | undefined }): PageLocale {
    const lang = negotiateLocale({ ...request, available: this.available, defaultLocale: this.#default });
    return { lang, t: this.messages(lang) };
  }
}

/** English, for a page rendered where no request tells more (and the default of page functions). */
export const ENGLISH: PageLocale = { lang: 'en', t: en };

const LOCALIZER = Symbol('the localizer of this auth server');
const UI_LOCALES = Symbol('the ui_locales of the request a page belongs to');

/** What choosing a language needs of a Koa context. */
interface LocaleContext {
  state: Record<PropertyKey, unknown>;
  get(field: string): string;
  query?: Record<string, unknown>;
}

const builtIn = new Localizer();

/** Makes the server's localizer available to every page our routes render (server.ts). */
export function provideLocalizer(localizer: Localizer) {
  return (ctx: { state: Record<PropertyKey, unknown> }, next: () => Promise<unknown>): Promise<unknown> => {
    ctx.state[LOCALIZER] = localizer;
    return next();
  };
}

/** Remembers the `ui_locales` of the sign-in a request belongs to (for its error page too). */
export function rememberUiLocales(ctx: { state: Record<PropertyKey, unknown> }, uiLocales: unknown): void {
  ctx.state[UI_LOCALES] = uiLocales;
}

/** Whether the `ui_locales` of the sign-in a request belongs to are known yet. */
export function knowsUiLocales(ctx: { state: Record<PropertyKey, unknown> }): boolean {
  return UI_LOCALES in ctx.state;
}

/**
 * The language of a page answering `ctx`: the `ui_locales` given (or remembered, or in the query
 * of an authorization request), then the browser's `Accept-Language`.
 */
export function localeOf(ctx: LocaleContext, uiLocales?: unknown): PageLocale {
  const localizer = (ctx.state[LOCALIZER] as Localizer | undefined) ?? builtIn;
  return localizer.choose({
    uiLocales: uiLocales ?? ctx.state[UI_LOCALES] ?? ctx.query?.ui_locales,
    acceptLanguage: ctx.get('accept-language'),
  });
}
