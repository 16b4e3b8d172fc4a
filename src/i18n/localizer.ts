import { de } from './messages/de.js';
import { en, type Messages } from './messages/en.js';
import { fr } from './messages/fr.js';
import { negotiateLocale } from './locale.js';

/**
 * The `i18n` option: texts the host adds or overrides, per language tag, and the language served
 * when nothing the request or the browser asks for is available.
 */
export interface I18nOptions {
  /**
   * Texts per BCP 47 tag (`'nl'`, `'de'`, `'pt-BR'`). A tag of ours (`en`, `de`, `fr`) has only the
   * texts given replaced; a new tag is a new language, its missing texts in English.
   */
  messages?: Record<string, Partial<Messages>>;
  /** The language served when nothing matches: `en` (default) or any language above. */
  defaultLocale?: string;
}

/** A page's language: its tag (for `<html lang>`) and its texts. */
export interface PageLocale {
  lang: string;
  t: Messages;
}

/** The languages we ship. */
export const BUILT_IN_MESSAGES: Readonly<Record<string, Messages>> = { en, de, fr };

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
