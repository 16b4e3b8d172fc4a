/*
 * The option reference of docs/configuration.md, generated from the option schema (src/options.ts),
 * as src/http/wire.ts makes the OpenAPI document from the wire schema: each option's words are its
 * `.meta({ description })`, its default what the schema gives for an absent value, its bounds the
 * schema's own checks (read through `z.toJSONSchema`). test/options-reference.test.ts keeps the
 * page equal to it (`UPDATE_DOCS=1` writes it).
 */
import { z } from 'zod';

/** What an option's `.meta()` says for the reference. */
export interface OptionMeta {
  /** What the option is: Markdown, one table cell (links to the page's sections may follow). */
  description: string;
  /** What an optional option without a default means when absent (e.g. "generated"); else "none". */
  absent?: string;
}

/** A bound of an option, or of a value inside it: at `path` below the option, of each element when `each`. */
export interface OptionBound {
  path: readonly string[];
  each: boolean;
  /** In words: `300..3,600 s (5 minutes..1 hour)`, `at most 200 characters`, "one of `ES256`, ...". */
  text: string;
  /** The numbers the bound states, so that a test can tell when a description repeats them. */
  numbers: readonly number[];
}

/** A row of the reference: an option with words of its own (an object option without them has a row per member). */
export interface OptionRow {
  option: string;
  /** `required`, the default as code, or the words for an absent optional option. */
  default: string;
  description: string;
  bounds: readonly OptionBound[];
}

interface Def {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
}

const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'nonoptional', 'readonly', 'catch']);

/** The schema `schema` wraps (optional, default, a pipe's input), if it is a wrapper. */
function wrapped(schema: z.ZodType): z.ZodType | undefined {
  const def = schema._zod.def as unknown as Def;
  if (WRAPPERS.has(def.type)) return def.innerType;
  if (def.type === 'pipe') return def.in;
  return undefined;
}

/** The option's words: its own `.meta()`, or that of a schema it wraps (`.meta()` may come before `.optional()`). */
function metaOf(schema: z.ZodType): OptionMeta | undefined {
  for (let current: z.ZodType | undefined = schema; current; current = wrapped(current)) {
    const meta = current.meta();
    if (typeof meta?.description === 'string') {
      return { description: meta.description, ...(typeof meta.absent === 'string' ? { absent: meta.absent } : {}) };
    }
  }
  return undefined;
}

function objectOf(schema: z.ZodType): z.ZodObject | undefined {
  for (let current: z.ZodType | undefined = schema; current; current = wrapped(current)) {
    if (current instanceof z.ZodObject) return current;
  }
  return undefined;
}

/** A value as code: strings quoted, objects and arrays as literals. */
function literal(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (Array.isArray(value)) return `[${value.map(literal).join(', ')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).map(([key, member]) => `${key}: ${literal(member)}`);
    return entries.length ? `{ ${entries.join(', ')} }` : '{}';
  }
  return String(value);
}

/** 1234567 → 1,234,567. */
const grouped = (value: number): string => String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
const plural = (count: number, unit: string): string => `${count} ${unit}${count === 1 ? '' : 's'}`;

/**
 * What an option's numbers count, from its name (the options are named so: `sessionTtl`,
 * `bodyTimeoutMs`, ...), and a reading in a larger unit where one fits (`86400` is 1 day).
 */
const UNITS: ReadonlyArray<readonly [RegExp, string, ((value: number) => string | undefined)?]> = [
  [/Bytes$/, 'bytes', (value) => (value % 1_048_576 === 0 ? `${value / 1_048_576} MiB` : value % 1024 === 0 ? `${value / 1024} KiB` : undefined)],
  [/Ms$/, 'ms'],
  [/(Seconds|Ttl)$/, 's', (value) => {
    for (const [size, unit] of [[86_400, 'day'], [3600, 'hour'], [60, 'minute']] as const) {
      if (value >= size && value % size === 0) return plural(value / size, unit);
    }
    return undefined;
  }],
  [/Days$/, 'days'],
];

const unitOf = (key: string) => UNITS.find(([pattern]) => pattern.test(key));

/**
 * The default column: `required`, the default the schema gives an absent value (as code), or the
 * `absent` words of an optional option without one (`none` when it has no words for it).
 */
function defaultOf(schema: z.ZodType, option: string, meta: OptionMeta): string {
  const absent = schema.safeParse(undefined);
  if (!absent.success || absent.data !== undefined) {
    if (meta.absent !== undefined) throw new Error(`option ${option}: "absent" words for an option that is required or has a default`);
    if (!absent.success) return 'required';
    const larger = typeof absent.data === 'number' ? unitOf(option)?.[2]?.(absent.data) : undefined;
    return `\`${literal(absent.data)}\`${larger ? ` (${larger})` : ''}`;
  }
  return meta.absent ?? 'none';
}

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema | JsonSchema[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
}

/** A range in words; `larger` reads the ends in a larger unit where one fits. */
function range(
  min: number | undefined,
  max: number | undefined,
  unit: string,
  noun: (value: number) => string,
  larger?: (value: number) => string | undefined,
): { text: string; numbers: number[] } | undefined {
  const numbers = [min, max].filter((value): value is number => value !== undefined);
  if (numbers.length === 0) return undefined;
  const suffix = unit ? ` ${unit}` : '';
  const readable = (values: number[]): string => {
    const words = values.map((value) => larger?.(value));
    return words.some((word) => word !== undefined)
      ? ` (${words.map((word, index) => word ?? `${grouped(values[index]!)}${suffix}`).join('..')})`
      : '';
  };
  if (min !== undefined && max !== undefined) return { text: `${grouped(min)}..${grouped(max)}${suffix || noun(max)}${readable([min, max])}`, numbers };
  if (min !== undefined) return { text: `at least ${grouped(min)}${suffix || noun(min)}${readable([min])}`, numbers };
  return { text: `at most ${grouped(max!)}${suffix || noun(max!)}${readable([max!])}`, numbers };
}

const isType = (node: JsonSchema, type: string): boolean => node.type === type || (Array.isArray(node.type) && node.type.includes(type));

/** The bounds a JSON Schema node states itself (not those of its members). */
function boundOf(node: JsonSchema, key: string): { text: string; numbers: number[] } | undefined {
  if (node.enum && node.enum.length > 1) {
    const values = node.enum.map((value) => `\`${String(value)}\``);
    return { text: `one of ${values.slice(0, -1).join(', ')} or ${values.at(-1)}`, numbers: [] };
  }
  if (isType(node, 'integer') || isType(node, 'number')) {
    if (node.exclusiveMinimum !== undefined || node.exclusiveMaximum !== undefined) throw new Error(`${key}: exclusive bounds are not rendered`);
    const [, unit = '', larger] = unitOf(key) ?? [];
    // zod states a whole number's safe range when nothing narrower is given: not a bound of ours.
    const min = node.minimum === Number.MIN_SAFE_INTEGER ? undefined : node.minimum;
    const max = node.maximum === Number.MAX_SAFE_INTEGER ? undefined : node.maximum;
    return range(min, max, unit, () => '', larger);
  }
  if (isType(node, 'string')) {
    if (node.minLength === 1 && node.maxLength === undefined) return { text: 'not empty', numbers: [] };
    return range(node.minLength, node.maxLength, '', (value) => ` ${value === 1 ? 'character' : 'characters'}`);
  }
  if (isType(node, 'array')) return range(node.minItems, node.maxItems, '', (value) => ` ${value === 1 ? 'entry' : 'entries'}`);
  return undefined;
}

/**
 * Every bound in `node` and below it: object members by name, array elements as `each`, each
 * branch of a union. A record's values are not walked: its keys are the caller's (tags, scope
 * names), not options.
 */
function collectBounds(node: JsonSchema, path: readonly string[], key: string, each: boolean, into: OptionBound[]): void {
  const bound = boundOf(node, key);
  if (bound && !into.some((known) => known.path.join('.') === path.join('.') && known.each === each && known.text === bound.text)) {
    into.push({ path, each, ...bound });
  }
  for (const [member, value] of Object.entries(node.properties ?? {})) collectBounds(value, [...path, member], member, false, into);
  if (node.items && !Array.isArray(node.items)) collectBounds(node.items, path, key, true, into);
  for (const branch of [...(node.anyOf ?? []), ...(node.oneOf ?? []), ...(node.allOf ?? [])]) collectBounds(branch, path, key, each, into);
}

function boundsOf(schema: z.ZodType, key: string): OptionBound[] {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  const bounds: OptionBound[] = [];
  collectBounds(json, [], key, false, bounds);
  return bounds;
}

/**
 * The rows of the reference for `schema`'s options, in the schema's order. Throws for an option
 * without words (a `.meta({ description })` on it, or on each member of an object option).
 */
export function optionRows(schema: z.ZodType, path: readonly string[] = []): OptionRow[] {
  const meta = path.length ? metaOf(schema) : undefined;
  if (meta) {
    const option = path.join('.');
    return [{ option, default: defaultOf(schema, option, meta), description: meta.description, bounds: boundsOf(schema, path.at(-1)!) }];
  }
  const object = objectOf(schema);
  if (!object) throw new Error(`option ${path.join('.')} has no description: give it .meta({ description })`);
  return Object.entries(object.shape).flatMap(([key, member]) => optionRows(member as z.ZodType, [...path, key]));
}

/** A row's bounds in words: the option's own first, then its members' by path (`perClient.max 1..100,000`). */
function boundsText(bounds: readonly OptionBound[]): string {
  const paths = [...new Set(bounds.map((bound) => bound.path.join('.')))];
  return paths.map((path) => {
    const own = bounds.filter((bound) => bound.path.join('.') === path && !bound.each).map((bound) => bound.text);
    const each = bounds.filter((bound) => bound.path.join('.') === path && bound.each).map((bound) => bound.text);
    const text = [...own, ...(each.length ? [`each ${each.join(', ')}`] : [])].join(', ');
    return path ? `\`${path}\` ${text}` : text;
  }).join('; ');
}

/** A table cell: one line, `|` escaped (also inside code spans, as GitHub's tables need). */
const cell = (text: string): string => text.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|');

/** The option reference as a Markdown table: option, default, and what it is with its bounds. */
export function optionsReferenceMarkdown(schema: z.ZodType): string {
  const rows = optionRows(schema).map(({ option, default: byDefault, description, bounds }) => {
    const meaning = bounds.length ? `${description}. Bounds: ${boundsText(bounds)}` : description;
    return `| \`${option}\` | ${cell(byDefault)} | ${cell(meaning)} |`;
  });
  return ['| option | default | meaning |', '| --- | --- | --- |', ...rows].join('\n');
}
