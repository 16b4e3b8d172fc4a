/*
 * The `portal` option, stated here beside the portal (src/options.ts composes it into the option
 * schema; docs/configuration.md's option reference is generated from it).
 */
import { z } from 'zod';
import { languageTagSchema } from '../i18n/locale.js';
import { checkedAs, httpUrlWithoutTrailingSlash } from '../option-kinds.js';
import { PORTAL_TEXT, type PortalTextOverrides } from './text.js';

/**
 * A host's portal texts for one language: names of ours only, each of the kind ours is (a text, a
 * function, or a group of them, checked one level down).
 */
const portalMessages = checkedAs<PortalTextOverrides>(z.record(z.string(), z.unknown()).superRefine((given, ctx) => {
  const check = (ours: Record<string, unknown>, theirs: Record<string, unknown>, path: string[]) => {
    for (const [key, value] of Object.entries(theirs)) {
      if (value === undefined) continue;
      if (!Object.hasOwn(ours, key)) {
        ctx.addIssue({ code: 'custom', path: [...path, key], message: 'is not a text of the portal (see PortalText)' });
        continue;
      }
      const mine = ours[key];
      const kind = typeof mine === 'object' && mine !== null ? 'group' : typeof mine;
      const theirKind = typeof value === 'object' && value !== null && !Array.isArray(value) ? 'group' : typeof value;
      if (kind !== theirKind) ctx.addIssue({ code: 'custom', path: [...path, key], message: `must be a ${kind === 'group' ? 'group of texts' : kind === 'function' ? 'function' : 'string'}` });
      else if (kind === 'group' && path.length === 0) check(mine as Record<string, unknown>, value as Record<string, unknown>, [key]);
    }
  };
  check(PORTAL_TEXT as unknown as Record<string, unknown>, given, []);
}));

/** The administration portal: off by default; where it is served, where it reaches us, its texts. */
export const portalOptionSchema = z
  .object({
    enabled: z.boolean().default(false),
    path: z.string().regex(/^(\/[a-z0-9-]+)+$/, "must be like '/portal': lower-case letters, digits and '-' in each segment").max(64).default('/portal'),
    internalUrl: httpUrlWithoutTrailingSlash
      .refine((value) => value.startsWith('https:') || ['localhost', '127.0.0.1', '[::1]'].includes(new URL(value).hostname), {
        message: 'must be https, or http to a loopback address (the portal sends its secret and users\' tokens there)',
      })
      .optional(),
    messages: z.record(languageTagSchema, portalMessages).optional(),
  })
  .strict()
  .prefault({})
  .meta({
    description: 'the [administration portal](management-api.md#the-administration-portal) at `{pathPrefix}{path}` '
      + '(`path`: lower-case segments like `/portal` or `/admin/portal`); `internalUrl` (e.g. `http://127.0.0.1:3000`): '
      + 'where the server reaches its own token endpoint and APIs, when not at `baseUrl` (https, or http to a loopback address); '
      + "`messages`: the portal's texts a host adds or overrides per language tag, like `i18n.messages` "
      + "(`{ nl: { product: 'Ontwikkelaarsportaal', ... }, en: { clients: { heading: 'Integrations' } } }`; groups merged one "
      + 'level down; a name that is not ours is refused at start)',
  });
