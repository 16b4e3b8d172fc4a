import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { jsonFaultAt } from '../../adapters/redis/settings.js';
import { AuditTrail, DEFAULT_AUDIT_SETTINGS } from '../audit/trail.js';
import { operatorContext } from '../audit/operator.js';
import { Backups, type BackupDocument, type BackupImportCounts, type BackupKind } from '../records/backup.js';
import { loadApiCatalog } from './apis.js';
import { required } from './args.js';
import type { Command, CommandContext } from './commands.js';
import { UsageError } from './errors.js';
import { writePrivateFile } from './keys.js';
import { json, table } from './output.js';

/*
 * `talent-auth export` and `talent-auth import`: the configuration as a backup document, with the
 * library's own Backups (src/records/backup.ts: what a document holds, how an import checks and
 * writes). The document holds secrets' digests and, with --consents, users' decisions: a file
 * is written readable by its owner only (0600), and never over an existing file without --force.
 */

/**
 * The largest document `import` reads: far above any real configuration (a client or app record is
 * about 1 KiB, so this holds tens of thousands), and a bound on what one import parses in memory.
 */
const MAX_DOCUMENT_BYTES = 64 * 1024 * 1024;

/** The kinds, as the document names them and as a person reads them. */
const KIND_WORDS: Record<BackupKind, string> = {
  clientConfigurations: 'client configurations',
  appRegistrations: 'app registrations',
  tenantSettings: 'tenant settings',
  consents: 'consents',
};
const KIND_WIRE: Record<BackupKind, string> = {
  clientConfigurations: 'client_configurations',
  appRegistrations: 'app_registrations',
  tenantSettings: 'tenant_settings',
  consents: 'consents',
};
const KINDS = Object.keys(KIND_WORDS) as BackupKind[];

/**
 * `needsCatalog`: the document holds client configurations or consents, whose resources and scopes
 * are checked against the deployment's catalog (--apis, TALENT_AUTH_APIS), required then as
 * `clients create` requires it; otherwise it is read when given.
 */
async function backups(context: CommandContext, needsCatalog = false): Promise<Backups> {
  const apis = context.args.values.apis ?? context.io.env.TALENT_AUTH_APIS;
  const catalog = needsCatalog || apis ? loadApiCatalog(apis, context.io.cwd) : undefined;
  const store = await context.store();
  const audit = new AuditTrail(store, DEFAULT_AUDIT_SETTINGS, { info() {}, warn() {}, error() {} }, undefined);
  return new Backups(store, audit, catalog);
}

/** Whether a document (not yet checked) holds records its import checks against the catalog. */
function holdsCatalogRecords(document: unknown): boolean {
  const records = (document as { records?: Record<string, unknown> } | null)?.records;
  return ['clientConfigurations', 'consents'].some((kind) => {
    const list = records?.[kind];
    return Array.isArray(list) && list.length > 0;
  });
}

/** How many records of each kind a document holds. */
function sizes(document: BackupDocument): Record<string, number> {
  return Object.fromEntries(KINDS.flatMap((kind) => {
    const records = document.records[kind];
    return records === undefined ? [] : [[KIND_WIRE[kind], records.length]];
  }));
}

const exportCommand: Command = {
  options: ['tenant', 'consents', 'out', 'force'],
  operands: [],
  async run(context) {
    const { values } = context.args;
    if (values.force && values.out === undefined) throw new UsageError('export: --force replaces the file of --out; give --out', '--force');
    const document = await (await backups(context)).export({
      ...(values.tenant !== undefined ? { tenant: values.tenant } : {}),
      consents: values.consents === true,
    });
    const text = json(document);
    // Without --out the document itself is the output, --json or not.
    if (values.out === undefined) {
      context.io.stdout(text);
      return;
    }
    const path = resolve(context.io.cwd, values.out);
    // Always 0600, replacing a file or not: a backup is never left readable by a group.
    writePrivateFile(path, text, values.force === true, '--out', { keepGroupRead: false });
    const counts = sizes(document);
    const words = Object.entries(counts).map(([kind, count]) => `${count} ${kind.replace(/_/g, ' ')}`).join(', ');
    context.io.stdout(context.json
      ? json({ file: path, exported_at: document.exportedAt, ...(document.tenant !== undefined ? { tenant: document.tenant } : {}), counts })
      : `Exported ${words} to ${path} (readable by its owner only).\n`);
  },
};

/** The document in `--file`, parsed (its content is checked by the import). */
function readDocument(file: string, cwd: string): unknown {
  const path = resolve(cwd, file);
  let text: string;
  try {
    if (statSync(path).size > MAX_DOCUMENT_BYTES) throw new UsageError(`--file ${file}: larger than ${MAX_DOCUMENT_BYTES} bytes: not a backup document`, '--file');
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`--file ${file}: cannot read the file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, '--file');
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    // Never JSON.parse's message: it quotes the document around the fault (digests, users' IDs).
    throw new UsageError(`--file ${file}: not valid JSON${jsonFaultAt(text, error)}`, '--file');
  }
}

function countsTable(counts: BackupImportCounts): string {
  return table(
    ['RECORDS', 'CREATED', 'UPDATED', 'UNCHANGED'],
    KINDS.map((kind) => [KIND_WORDS[kind], String(counts[kind].created), String(counts[kind].updated), String(counts[kind].unchanged)]),
  );
}

const importCommand: Command = {
  options: ['file', 'dry-run', 'overwrite', 'actor'],
  operands: [],
  async run(context) {
    const { values } = context.args;
    const document = readDocument(required(values.file, 'file', 'import'), context.io.cwd);
    const by = operatorContext(values.actor);
    const result = await (await backups(context, holdsCatalogRecords(document))).import(document, { dryRun: values['dry-run'] === true, overwrite: values.overwrite === true }, by);
    const changes = KINDS.reduce((sum, kind) => sum + result.counts[kind].created + result.counts[kind].updated, 0);
    if (context.json) {
      context.io.stdout(json({
        dry_run: result.dryRun,
        changed: changes,
        counts: Object.fromEntries(KINDS.map((kind) => [KIND_WIRE[kind], result.counts[kind]])),
      }));
      return;
    }
    const verdict = changes === 0
      ? 'Nothing to change: every record is already as in the document.'
      : result.dryRun
        ? `Dry run: ${changes} record(s) would be written; nothing was written.`
        : `Imported: ${changes} record(s) written, each recorded in the audit trail.`;
    context.io.stdout(`${countsTable(result.counts)}${verdict}\n`);
  },
};

/** The backup commands: one word each (`talent-auth export`, `talent-auth import`). */
export const BACKUP_COMMANDS: Record<string, Command> = {
  export: exportCommand,
  import: importCommand,
};
