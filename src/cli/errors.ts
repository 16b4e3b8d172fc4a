/** Exit codes of the CLI. */
export const EXIT_OK = 0;
/** Usage and validation errors (wrong flags, invalid input, unknown IDs). */
export const EXIT_INVALID = 1;
/** The store cannot be reached (refused, timed out, authentication refused, connection lost). */
export const EXIT_CONNECTION = 2;

/** Wrong command line: a missing or malformed flag. `field` names the flag or field. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The Redis store could not be reached or was lost. */
export class ConnectionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConnectionError';
  }
}
