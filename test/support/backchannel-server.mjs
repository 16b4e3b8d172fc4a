// talent-auth in a plain Node process (no jest): the BUILT library (`npm run build`), memory store,
// with one operator app whose back-channel logout URI the test names, to check delivery outside
// jest's module sandbox. Options come as JSON in BACKCHANNEL_SERVER_OPTIONS:
//   { privateHosts?: string[], redirectUri, postLogoutRedirectUri, backchannelLogoutUri,
//     accounts: [{ sub, password, tenant }] }
// It prints {"port":N,"clientId":...,"clientSecret":...} on one stdout line, writes warnings and
// errors as JSON lines on stderr, and exits on SIGTERM or as soon as its stdin closes.
import { createServer } from 'node:http';
import { createAuthServer } from '../../dist/src/index.js';
import { demoApis } from '../../dist/examples/demo-data.js';
import { accountsOf, stopWithParent } from './child-process.mjs';

const options = JSON.parse(process.env.BACKCHANNEL_SERVER_OPTIONS ?? '{}');
const accounts = accountsOf(options.accounts ?? []);
const line = (level) => (message, fields) => process.stderr.write(`${JSON.stringify({ level, message, ...fields })}\n`);
const logger = { info() {}, warn: line('warn'), error: line('error') };

const http = createServer();
await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
const { port } = http.address();
const auth = await createAuthServer({
  baseUrl: `http://127.0.0.1:${port}`,
  apis: demoApis,
  accounts,
  cookieKeys: ['a-cookie-key-of-at-least-32-characters'],
  logger,
  ...(options.privateHosts ? { backchannelLogout: { privateHosts: options.privateHosts } } : {}),
});
const app = await auth.appRegistrations.create({
  name: 'Local app',
  redirectUris: [options.redirectUri],
  postLogoutRedirectUris: [options.postLogoutRedirectUri],
  backchannelLogoutUri: options.backchannelLogoutUri,
  clientType: 'confidential',
});
http.on('request', auth.app.callback());
process.stdout.write(`${JSON.stringify({ port, clientId: app.clientId, clientSecret: app.clientSecret })}\n`);

stopWithParent(http, auth);
