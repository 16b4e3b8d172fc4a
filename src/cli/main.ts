import type { Store } from '../../adapters/types.js';
import { NotFound, OAuthError, ValidationError } from '../../policies/errors.js';
import { allowOnly, parseCommandLine } from './args.js';
import { COMMANDS } from './commands.js';
import { CONNECTION_COMMANDS } from './connections.js';
import { BACKUP_COMMANDS } from './backup.js';
import { BACKUP_HELP } from './help-backup.js';
import { StoreUnavailable } from '../../adapters/types.js';
import { ConnectionError, EXIT_CONNECTION, EXIT_INVALID, EXIT_OK, UsageError } from './errors.js';
import { COMMAND_HELP, GROUP_HELP, TOP_HELP } from './help.js';
import { json, type CliIo } from './output.js';
import { openRedisStore } from './store.js';

export type { CliIo } from './output.js';

interface Failure {
  code: number;
  error: string;
  message: string;
  field?: string;
}

export function failureOf(error: unknown): Failure {
  if (error instanceof UsageError) {
    return { code: EXIT_INVALID, error: 'usage_error', message: error.message, ...(error.field ? { field: error.field } : {}) };
  }
  if (error instanceof ValidationError) {
    return { code: EXIT_INVALID, error: 'validation_error', message: error.message, field: error.field };
  }
  if (error instanceof NotFound) return { code: EXIT_INVALID, error: 'not_found', message: error.message };
  if (error instanceof OAuthError) return { code: EXIT_INVALID, error: error.error, message: error.message };
  if (error instanceof ConnectionError) return { code: EXIT_CONNECTION, error: 'connection_failed', message: error.message };
  // The store turns every lost connection or unanswered command into StoreUnavailable.
  if (error instanceof StoreUnavailable) {
    return { code: EXIT_CONNECTION, error: 'connection_failed', message: `lost the connection to Redis (${error.reason})` };
  }
  return { code: EXIT_INVALID, error: 'failed', message: error instanceof Error ? error.message : String(error) };
}

/**
 * Runs one command line (without `node` and the script) and answers the exit code: 0 success,
 * 1 usage or validation error, 2 Redis unreachable. Results go to stdout, errors to stderr.
 */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  let machine = argv.includes('--json');
  let store: Store | undefined;
  try {
    const args = parseCommandLine(argv);
    machine = args.values.json === true;
    const [group, verb, ...operands] = args.positionals;
    const help = args.values.help === true;
    if (group === undefined) {
      if (help) {
        io.stdout(TOP_HELP);
        return EXIT_OK;
      }
      throw new UsageError('missing command; run talent-auth --help');
    }
    // A command of one word (export, import): what follows it is its operands.
    const single = Object.hasOwn(BACKUP_COMMANDS, group) ? BACKUP_COMMANDS[group] : undefined;
    if (!single && !GROUP_HELP[group]) throw new UsageError(`unknown command "${group}"; run talent-auth --help`);
    if (single && help) {
      io.stdout(BACKUP_HELP[group]!);
      return EXIT_OK;
    }
    if (!single && verb === undefined) {
      if (help) {
        io.stdout(GROUP_HELP[group]!);
        return EXIT_OK;
      }
      throw new UsageError(`talent-auth ${group}: missing command; run talent-auth ${group} --help`);
    }
    const name = single ? group : `${group} ${verb}`;
    const command = single ?? COMMANDS[name] ?? CONNECTION_COMMANDS[name];
    if (!command) throw new UsageError(`unknown command "${name}"; run talent-auth ${group} --help`);
    if (single && verb !== undefined) operands.unshift(verb);
    if (help) {
      io.stdout(COMMAND_HELP[name]!);
      return EXIT_OK;
    }
    allowOnly(args, name, command.options);
    if (operands.length !== command.operands.length) {
      const expected = command.operands.map((operand) => `<${operand}>`).join(' ');
      throw new UsageError(
        operands.length < command.operands.length
          ? `${name}: missing ${expected}`
          : `${name}: unexpected argument "${operands[command.operands.length]}"`,
        command.operands[operands.length],
      );
    }
    await command.run({
      args,
      operands,
      io,
      json: machine,
      store: async () => (store ??= await openRedisStore(args, io)),
    });
    return EXIT_OK;
  } catch (error) {
    const failure = failureOf(error);
    const { code, ...body } = failure;
    io.stderr(machine ? json(body) : `talent-auth: ${failure.message}\n`);
    return code;
  } finally {
    await store?.close();
  }
}
