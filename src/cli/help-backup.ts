/* Help texts of `talent-auth export` and `talent-auth import` (src/cli/backup.ts). */

const STORE_AND_OUTPUT = `Store options:
  --redis <url>          Redis URL (redis:// or rediss://); default: env REDIS_URL. Required.
  --key-prefix <prefix>  key prefix of the deployment (default: talent-auth:)

Output:
  --json                 machine-readable JSON on stdout (snake_case names); errors as JSON on stderr
  -h, --help             this help

Exit codes: 0 success, 1 usage or validation error (stderr names the record and field), 2 Redis
unreachable.`;

/** `talent-auth export --help`, `talent-auth import --help`. */
export const BACKUP_HELP: Record<string, string> = {
  export: `Usage: talent-auth export [--tenant <id>] [--consents] [--out <file> [--force]]

Writes the configuration as a backup document (JSON: format talent-auth.backup, version 1):
client configurations, app registrations and tenant settings, and with --consents the users'
consents. A secret is in it only as its digest: it authenticates again after an import, and
nothing in the document signs anyone in by itself. Not in it: the portal's own app (each server
writes it), connections to identity providers (their secret is sealed under this deployment's
factor keys: create them again with connections create), tokens, sessions, factors, the audit
trail. See docs/operations.md, "Backup and restore".

  --tenant <id>   only this tenant's client configurations, apps, settings and consents
                  (not the operator's apps, which every tenant shares)
  --consents      include consents (who allowed which app: personal data)
  --out <file>    write the document to the file, readable by its owner only (0600, also when
                  --force replaces a group-readable file), and print
                  a summary; without it the document goes to stdout
  --force         replace the file of --out when it exists (atomically)

${STORE_AND_OUTPUT}
`,
  import: `Usage: talent-auth import --file <file> [--dry-run] [--overwrite] [--actor <name>]

Restores a backup document written by talent-auth export. The whole document is checked before
anything is written: its format and version, every field of every record, each record by the
rules it is created under (redirect URIs, keys, PKCE, the high-security profile, a client's APIs
and a consent's scopes against the API catalog). A document of one tenant (export --tenant) may
hold that tenant's records only. A bad record anywhere: nothing is written, and the error names
the record (records.<kind>.<index>, its client ID or tenant) and the field.

A document with client configurations or consents needs the API catalog: --apis <file> or
TALENT_AUTH_APIS (as clients create does).

A record equal to the stored one is left alone: importing the same document twice writes
nothing the second time. A stored record whose content differs (changed since the export) is
refused, naming it, and nothing is written, unless --overwrite. A record never moves to another
tenant. Each record written is recorded in the audit trail of its tenant as its own kind's event
(client_configuration.created, app_registration.updated, tenant_settings.updated,
consent.granted, ...), with details.imported true. Running servers see each write at once.

  --file <file>   the document to import (at most 64 MiB)
  --apis <file>   the API catalog (default: env TALENT_AUTH_APIS)
  --dry-run       check everything and print what would change; write nothing
  --overwrite     replace stored records whose content differs from the document's
  --actor <name>  who acts, recorded as the operator's name in the audit trail

It prints, per kind of record, how many were created, updated and left unchanged.

${STORE_AND_OUTPUT}
`,
};
