import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { optionsSchema } from '../src/options.js';
import { optionRows, optionsReferenceMarkdown } from '../src/options-reference.js';

/*
 * The option reference of docs/configuration.md is generated from the option schema: each option's
 * words from its `.meta({ description })`, its default and bounds from the schema's own checks.
 * test/public-api-docs.test.ts checks, besides, that every option path is named in its row.
 */

const DOCS = join(process.cwd(), 'docs/configuration.md');
const BEGIN = '<!-- option table: generated from the option schema (src/options.ts) -->';
const END = '<!-- end of the option table -->';

describe('the option reference (src/options-reference.ts)', () => {
  it('is what docs/configuration.md shows (UPDATE_DOCS=1 writes it)', () => {
    const docs = readFileSync(DOCS, 'utf8');
    expect(docs).toContain(BEGIN);
    const generated = `${BEGIN}\n${optionsReferenceMarkdown(optionsSchema)}\n${END}`;
    const current = docs.slice(docs.indexOf(BEGIN), docs.indexOf(END) + END.length);
    if (process.env.UPDATE_DOCS === '1' && current !== generated) writeFileSync(DOCS, docs.replace(current, generated));
    else expect(current).toBe(generated);
  });

  it('has a row for every option: an object option without words of its own has one per member', () => {
    const rows = optionRows(optionsSchema).map((row) => row.option);
    expect(rows).toEqual(expect.arrayContaining(['baseUrl', 'store', 'limits.tokenRequestBytes', 'rateLimits.failedSignIn', 'backchannelLogout.privateHosts', 'portal', 'logger']));
    expect(rows).not.toContain('limits');
    const topLevel = new Set(rows.map((option) => option.split('.')[0]));
    expect(topLevel).toEqual(new Set(Object.keys(optionsSchema.shape)));
  });

  it('takes defaults and bounds from the schema: the lifetimes of policies/lifetimes.ts, the body limits', () => {
    const row = (option: string) => optionRows(optionsSchema).find((candidate) => candidate.option === option)!;
    expect(row('sessionTtl')).toMatchObject({ default: '`86400` (1 day)', bounds: [{ path: [], text: '300..2,592,000 s (5 minutes..30 days)' }] });
    expect(row('limits.formRequestBytes')).toMatchObject({ default: '`4096` (4 KiB)', bounds: [{ text: '1,024..1,048,576 bytes (1 KiB..1 MiB)' }] });
    expect(row('baseUrl')).toMatchObject({ default: 'required', bounds: [{ text: 'at most 200 characters' }] });
    expect(row('keys').default).toBe('generated');
    expect(row('accounts').default).toBe('none');
    expect(row('rateLimits.authorize').default).toBe('`{ max: 120, windowSeconds: 60 }`');
  });

  /*
   * A description that repeats its option's bounds or default drifts from them (TSDoc once said
   * 0..300 where the schema said 0..60): the numbers are the schema's, shown in their own column.
   * 0 and 1 are left out: they are words too ("0: only...", "at least one").
   */
  it.each(optionRows(optionsSchema).map((row) => [row.option, row] as const))('%s: its words state none of its bounds or its default', (_option, row) => {
    const stated = new Set([...row.bounds.flatMap((bound) => bound.numbers), ...(row.default.match(/\d+/g) ?? []).map(Number)]);
    const said = (row.description.match(/\d[\d,]*/g) ?? []).map((number) => Number(number.replace(/,/g, '')));
    expect(said.filter((number) => number > 1 && stated.has(number))).toEqual([]);
  });

  describe('on a schema of its own', () => {
    const schema = z.object({
      name: z.string().min(1).max(40).meta({ description: 'what it is called' }),
      retryMs: z.number().int().min(50).max(10_000).default(500).meta({ description: 'how long | whether to wait' }),
      windowSeconds: z.number().int().min(60).max(7200).optional().meta({ description: 'a window', absent: 'no window' }),
      hosts: z.array(z.string().max(253)).max(100).default([]).meta({ description: 'hosts' }),
      mode: z.enum(['fast', 'safe']).default('safe').meta({ description: 'the mode' }),
      nested: z
        .object({ count: z.number().int().min(1).max(9).default(3).meta({ description: 'a count' }), plain: z.boolean().default(true).meta({ description: 'plain' }) })
        .prefault({}),
      grouped: z
        .object({ perKey: z.object({ max: z.number().int().min(1).max(100) }).default({ max: 5 }) })
        .prefault({})
        .meta({ description: 'a group' }),
      hook: z.custom<() => void>((value) => typeof value === 'function').optional().meta({ description: 'a function' }),
    });

    it('renders a row per described option, with its default and its bounds', () => {
      expect(optionsReferenceMarkdown(schema).split('\n')).toEqual([
        '| option | default | meaning |',
        '| --- | --- | --- |',
        '| `name` | required | what it is called. Bounds: 1..40 characters |',
        '| `retryMs` | `500` | how long \\| whether to wait. Bounds: 50..10,000 ms |',
        '| `windowSeconds` | no window | a window. Bounds: 60..7,200 s (1 minute..2 hours) |',
        '| `hosts` | `[]` | hosts. Bounds: at most 100 entries, each at most 253 characters |',
        "| `mode` | `'safe'` | the mode. Bounds: one of `fast` or `safe` |",
        '| `nested.count` | `3` | a count. Bounds: 1..9 |',
        '| `nested.plain` | `true` | plain |',
        '| `grouped` | `{ perKey: { max: 5 } }` | a group. Bounds: `perKey.max` 1..100 |',
        '| `hook` | none | a function |',
      ]);
    });

    it('refuses an option without words, naming it', () => {
      const undescribed = schema.extend({ nested: z.object({ count: z.number(), late: z.string().optional() }) });
      expect(() => optionsReferenceMarkdown(undescribed)).toThrow('option nested.count has no description');
    });

    it('refuses words for an absent value where the schema gives a default or requires the option', () => {
      expect(() => optionsReferenceMarkdown(z.object({ size: z.number().default(1).meta({ description: 'a size', absent: 'none' }) })))
        .toThrow('option size: "absent" words');
      expect(() => optionsReferenceMarkdown(z.object({ size: z.number().meta({ description: 'a size', absent: 'none' }) })))
        .toThrow('option size: "absent" words');
    });
  });
});
