import debug from 'debug';
import { basic, postToken, startServer } from '../support/server.js';

/** Spec, security rule 2: never log client secrets, codes, access tokens or refresh tokens. */
describe('logs', () => {
  it('never contain a secret or a token, even with the engine debug output on', async () => {
    const captured: string[] = [];
    const originalLog = debug.log;
    const originalStderr = process.stderr.write.bind(process.stderr);
    const originalStdout = process.stdout.write.bind(process.stdout);
    debug.log = (...args: unknown[]) => void captured.push(args.map(String).join(' '));
    debug.enable('oidc-provider:*');
    process.stderr.write = ((chunk: string | Uint8Array) => captured.push(String(chunk)) > 0) as typeof process.stderr.write;
    process.stdout.write = ((chunk: string | Uint8Array) => captured.push(String(chunk)) > 0) as typeof process.stdout.write;
    const server = await startServer();
    const secrets: string[] = [];
    try {
      const { clientId, clientSecret } = await server.auth.clientConfigurations.create({
        tenant: 'acme', name: 'n', category: 'c', resources: { scim: { scopes: ['scim.read'] } },
      });
      secrets.push(clientSecret);
      const rotated = await server.auth.clientConfigurations.rotateSecret(clientId);
      secrets.push(rotated.clientSecret);
      const good = basic(clientId, rotated.clientSecret);
      const ok = await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: good });
      secrets.push(ok.body.access_token as string);
      const attempts: Array<[string, Record<string, string>]> = [
        ['grant_type=client_credentials', { authorization: basic(clientId, clientSecret) }],
        [`grant_type=client_credentials&client_secret=${rotated.clientSecret}`, {}],
        [`grant_type=client_credentials&client_secret=${rotated.clientSecret}`, { authorization: good }],
        ['grant_type=client_credentials&scope=scim.write', { authorization: good }],
        ['grant_type=client_credentials&scope=%zz', { authorization: good }],
        [`grant_type=refresh_token&refresh_token=${ok.body.access_token as string}`, { authorization: good }],
        [`grant_type=authorization_code&code=${rotated.clientSecret}&client_id=${clientId}`, {}],
        ['grant_type=client_credentials', { authorization: `Basic ${Buffer.from(`${clientId}:${rotated.clientSecret}x`).toString('base64')}` }],
        ['grant_type=client_credentials', { authorization: `Bearer ${ok.body.access_token as string}` }],
      ];
      for (const [body, headers] of attempts) await postToken(server.oauthUrl, body, headers);
    } finally {
      await server.stop();
      debug.disable();
      debug.log = originalLog;
      process.stderr.write = originalStderr;
      process.stdout.write = originalStdout;
    }
    const everything = [...captured, ...server.logLines].join('\n');
    expect(captured.some((line) => line.includes('oidc-provider'))).toBe(true);
    for (const secret of secrets) expect(everything).not.toContain(secret);
  });
});
