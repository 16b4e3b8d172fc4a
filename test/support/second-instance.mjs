// A second talent-auth process for cross-process tests: the BUILT library (`npm run build`) on the
// Redis store the test names, with the same issuer, signing keys and cookie keys as the test's own
// in-process server. Options come as JSON in SECOND_INSTANCE_OPTIONS:
//   { baseUrl, redisUrl, keyPrefix, jwks, cookieKeys, accounts: [{ sub, password, tenant, claims?, scopes? }] }
// It listens on a free loopback port, prints {"port":N} on one stdout line, and exits on SIGTERM or
// as soon as its stdin closes (so it never outlives the test that started it).
import { createServer } from 'node:http';
import { createAuthServer } from '../../dist/src/index.js';
import { demoApis } from '../../dist/examples/demo-data.js';
import { accountsOf, stopWithParent } from './child-process.mjs';

const options = JSON.parse(process.env.SECOND_INSTANCE_OPTIONS ?? '{}');
const accounts = accountsOf(options.accounts ?? []);

const quiet = { info() {}, warn() {}, error: (message, fields) => process.stderr.write(`${JSON.stringify({ message, ...fields })}\n`) };

const auth = await createAuthServer({
  baseUrl: options.baseUrl,
  apis: demoApis,
  store: { type: 'redis', url: options.redisUrl, keyPrefix: options.keyPrefix },
  keys: { jwks: options.jwks },
  cookieKeys: options.cookieKeys,
  accounts,
  logger: quiet,
});

const http = createServer(auth.app.callback());
http.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: http.address().port })}\n`);
});

stopWithParent(http, auth);
