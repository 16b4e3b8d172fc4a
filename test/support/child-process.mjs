// What the talent-auth processes the tests start (second-instance.mjs, backchannel-server.mjs)
// share: they stop on SIGTERM, SIGINT, or as soon as their stdin closes, so that none outlives the
// test that started it; they read their users from the options the test passes.

/**
 * An account store over the users a test passes (`{ sub, password, ... }`): username = sub.
 * @param {Array<{ sub: string, password: string }>} list
 */
export function accountsOf(list) {
  const users = new Map(list.map((account) => [account.sub, account]));
  const strip = ({ password: _password, ...account }) => account;
  return {
    async authenticate({ username, password }) {
      const account = users.get(username);
      return account && account.password === password ? strip(account) : undefined;
    },
    async findAccount(sub) {
      const account = users.get(sub);
      return account && strip(account);
    },
  };
}

/**
 * Stops `http` and `auth` (once) and exits when the parent says so or goes away.
 * @param {import('node:http').Server} http
 * @param {{ close(): Promise<void> }} auth
 */
export function stopWithParent(http, auth) {
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
}
