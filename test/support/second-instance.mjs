// A second talent-auth process for cross-process tests: the BUILT library (`npm run build`) on the
// Redis store the test names, with the same issuer, signing keys and cookie keys as the test's own
// in-process server. Options come as JSON in SECOND_INSTANCE_OPTIONS:
//   { baseUrl, redisUrl, keyPrefix, jwks, cookieKeys, accounts: [{ sub, password, tenant, claims?, scopes? }] }
// It listens on a free loopback port, prints {"port":N} on one stdout line, and exits on SIGTERM or
// as soon as its stdin closes (so it never outlives the test that started it).
import { createServer } from 'node:http';
import { createAuthServer } from '../../dist/src/index.js';
import { demoApis } from '../../dist/examples/demo-data.js';

const options = JSON.parse(process.env.SECOND_INSTANCE_OPTIONS ?? '{}');
const users = new Map((options.accounts ?? []).map((account) => [account.sub, account]));
const strip = ({ password: _password, ...account }) => account;

const accounts = {
  async authenticate({ username, password }) {
    const account = users.get(username);
    return account && account.password === password ? strip(account) : undefined;
  },
  async findAccount(sub) {
    const account = users.get(sub);
    return account && strip(account);
  },
};

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

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  http.closeAllConnections();
  http.close();
  await auth.close().catch(() => undefined);
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();
