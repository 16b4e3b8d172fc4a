import { AsyncLocalStorage } from 'node:async_hooks';
import type { Context } from 'koa';
import { negotiateLocale } from '../i18n/locale.js';
import type { CheckedBranding } from '../pages/branding.js';
import { PORTAL_TEXT, withOverrides, type PortalText, type PortalTextOverrides } from './text.js';
import { PORTAL_TEXT_DE } from './text-de.js';
import { PORTAL_TEXT_FR } from './text-fr.js';

/** The portal's own languages: the same three as the sign-in pages. */
const BUILT_IN: Readonly<Record<string, PortalText>> = { en: PORTAL_TEXT, de: PORTAL_TEXT_DE, fr: PORTAL_TEXT_FR };

/** Ours and the host's (`portal.messages`): a known tag gets the texts given; a new one is English underneath. */
export function languagesOf(messages: Record<string, PortalTextOverrides> | undefined): Record<string, PortalText> {
  const languages: Record<string, PortalText> = { ...BUILT_IN };
  for (const [tag, overrides] of Object.entries(messages ?? {})) {
    const known = Object.keys(languages).find((existing) => existing.toLowerCase() === tag.toLowerCase());
    languages[known ?? tag] = withOverrides(languages[known ?? tag] ?? PORTAL_TEXT, overrides);
  }
  return languages;
}

/** The language and look of the request being answered (every page of it is rendered within it). */
export interface RequestLook {
  lang: string;
  t: PortalText;
  branding?: CheckedBranding | undefined;
  /** The browser's address, for the APIs' audit trail. */
  address?: string;
}

/**
 * The look of each request, where its pages are made. Requests run concurrently, so the language
 * cannot be a variable of the portal: it is the request's (AsyncLocalStorage).
 */
export class RequestLooks {
  readonly #looks = new AsyncLocalStorage<RequestLook>();
  readonly #languages: Record<string, PortalText>;
  /** The texts of the request's language, read where they are used. */
  readonly t: PortalText;

  constructor(messages: Record<string, PortalTextOverrides> | undefined) {
    this.#languages = languagesOf(messages);
    this.t = new Proxy({} as PortalText, { get: (_target, key) => this.current().t[key as keyof PortalText] });
  }

  /** The look of the request being answered (English and no branding outside one). */
  current(): RequestLook {
    return this.#looks.getStore() ?? { lang: 'en', t: PORTAL_TEXT };
  }

  /** The request's language (its `Accept-Language` among ours and the host's) and its texts. */
  languageOf(ctx: Context): { lang: string; t: PortalText } {
    const lang = negotiateLocale({ acceptLanguage: ctx.get('accept-language'), available: Object.keys(this.#languages), defaultLocale: 'en' });
    return { lang, t: this.#languages[lang] ?? PORTAL_TEXT };
  }

  /** Answers a request within its look. */
  run<T>(look: RequestLook, answer: () => T): T {
    return this.#looks.run(look, answer);
  }
}
