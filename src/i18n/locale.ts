/**
 * THE LANGUAGE OF A PAGE, chosen once per page by one rule:
 *
 * 1. the `ui_locales` of the request that led to the page (space-separated, in the app's order of
 *    preference): the first one we have wins;
 * 2. else the browser's `Accept-Language`, by its q-values (highest first, ties in header order;
 *    q=0 means "not this one");
 * 3. else the default (English unless the host says otherwise).
 *
 * A tag matches one we have when they are equal ignoring case, or when the one we have is a
 * prefix of it at a subtag boundary (`de-CH` is served in `de`). Malformed input is skipped
 * entry by entry, never thrown: these headers come from anyone.
 */

import { z } from 'zod';

/** What a tag looks like (BCP 47 in its common shape: a language and subtags of letters and digits). */
const TAG = /^[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*$/;
/** A language tag as the options take it (`de`, `pt-BR`): the shape negotiation matches. */
export const languageTagSchema = z.string().regex(TAG, 'must be a language tag like de or pt-BR');
/** A header longer than this is read only this far: nobody prefers 50 languages. */
const MAX_HEADER_CHARS = 1000;
const MAX_ENTRIES = 50;

/** What `negotiateLocale` weighs. */
export interface LocaleRequest {
  /** The request's `ui_locales` (a space-separated list); anything else is ignored. */
  uiLocales?: unknown;
  /** The `Accept-Language` header, as received. */
  acceptLanguage?: string | undefined;
  /** The tags we have texts for, e.g. `['en', 'de', 'fr']`. */
  available: readonly string[];
  /** Served when nothing matches; default the first of `available`. */
  defaultLocale?: string;
}

/** The tag of `available` that serves `wanted`, if any: the same tag, or the longest prefix of it. */
function match(wanted: string, available: readonly string[]): string | undefined {
  if (!TAG.test(wanted)) return undefined;
  const lower = wanted.toLowerCase();
  let best: string | undefined;
  for (const tag of available) {
    const candidate = tag.toLowerCase();
    if (candidate === lower) return tag;
    if (lower.startsWith(`${candidate}-`) && (!best || candidate.length > best.length)) best = tag;
  }
  return best;
}

/** The tags of an `Accept-Language` header in the order the browser prefers them. */
export function parseAcceptLanguage(header: string): string[] {
  const entries: Array<{ tag: string; q: number; index: number }> = [];
  const parts = header.slice(0, MAX_HEADER_CHARS).split(',').slice(0, MAX_ENTRIES);
  parts.forEach((part, index) => {
    const [rawTag, ...params] = part.split(';');
    const tag = rawTag?.trim() ?? '';
    if (!TAG.test(tag)) return;
    let q = 1;
    for (const param of params) {
      const [name, value] = param.split('=').map((piece) => piece.trim());
      if (name?.toLowerCase() !== 'q') continue;
      q = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(value ?? '') ? Number(value) : Number.NaN;
    }
    if (Number.isNaN(q) || q <= 0) return;
    entries.push({ tag, q, index });
  });
  return entries.sort((a, b) => b.q - a.q || a.index - b.index).map(({ tag }) => tag);
}

/** The language of a page (see the rule above); always one of `available` (or the default). */
export function negotiateLocale({ uiLocales, acceptLanguage, available, defaultLocale }: LocaleRequest): string {
  if (typeof uiLocales === 'string') {
    for (const wanted of uiLocales.slice(0, MAX_HEADER_CHARS).split(/\s+/).slice(0, MAX_ENTRIES)) {
      const found = wanted ? match(wanted, available) : undefined;
      if (found) return found;
    }
  }
  if (typeof acceptLanguage === 'string') {
    for (const wanted of parseAcceptLanguage(acceptLanguage)) {
      const found = match(wanted, available);
      if (found) return found;
    }
  }
  return defaultLocale ?? available[0] ?? 'en';
}
