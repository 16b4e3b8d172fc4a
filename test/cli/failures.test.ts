import { StoreUnavailable } from '../../adapters/types.js';
import { failureOf } from '../../src/cli/main.js';
import { ConnectionError, EXIT_CONNECTION, EXIT_INVALID, UsageError } from '../../src/cli/errors.js';
import { ValidationError } from '../../policies/errors.js';

describe('CLI exit codes of failures', () => {
  it('a connection lost mid-command is exit 2, like one that never came up', () => {
    expect(failureOf(new StoreUnavailable('connection'))).toMatchObject({ code: EXIT_CONNECTION, error: 'connection_failed' });
    expect(failureOf(new StoreUnavailable('timeout')).message).toContain('timeout');
    expect(failureOf(new ConnectionError('cannot reach Redis'))).toMatchObject({ code: EXIT_CONNECTION });
  });

  it('usage and validation errors are exit 1 with the field', () => {
    expect(failureOf(new UsageError('bad', '--tenant'))).toMatchObject({ code: EXIT_INVALID, error: 'usage_error', field: '--tenant' });
    expect(failureOf(new ValidationError('resources', 'required'))).toMatchObject({ code: EXIT_INVALID, field: 'resources' });
    expect(failureOf(new Error('boom'))).toMatchObject({ code: EXIT_INVALID, error: 'failed' });
  });
});
