import { startRecordingListener, type RecordingListener } from '../support/recording-listener.js';
import { PrivateHosts } from '../../policies/backchannel-logout.js';
import { deliveringFor, DeliveryError, deliveryFetch } from '../../src/engine/backchannel-delivery.js';

/**
 * The engine's fetch hook (src/engine/backchannel-delivery.ts) over real sockets: a listener on
 * 127.0.0.1 counts every connection, so "refused" is checked as "nothing connected".
 */

type Listener = RecordingListener;
const listen = startRecordingListener;

const OPERATOR_APP = {};
const TENANT_APP = { tenant: 'acme' };
const form = () => ({
  method: 'POST',
  headers: new Headers({ 'content-type': 'application/x-www-form-urlencoded', 'user-agent': '' }),
  body: new URLSearchParams({ logout_token: 'a.b.c' }),
  signal: AbortSignal.timeout(2500),
});

async function refusal(promise: Promise<unknown>): Promise<DeliveryError> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(DeliveryError);
  return error as DeliveryError;
}

describe('back-channel delivery (the engine fetch hook)', () => {
  let listener: Listener;
  beforeEach(async () => {
    listener = await listen();
  });
  afterEach(() => listener.close());

  it("posts to a loopback address the operator listed, for the operator's app: the body as given, no user agent", async () => {
    const fetch = deliveryFetch(new PrivateHosts(['127.0.0.1']));
    const response = await deliveringFor(OPERATOR_APP, () => fetch(`http://127.0.0.1:${listener.port}/bc?x=1`, form()));
    expect(response).toBeInstanceOf(Response);
    expect(response.status).toBe(200);
    expect(listener.requests).toEqual([expect.objectContaining({ method: 'POST', url: '/bc?x=1', body: 'logout_token=a.b.c' })]);
    expect(listener.requests[0]!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(listener.requests[0]!.headers).not.toHaveProperty('user-agent');
  });

  it('a listed network holds the address; a listed name is allowed whatever it resolves to', async () => {
    const byNetwork = deliveryFetch(new PrivateHosts(['127.0.0.0/8']));
    expect((await deliveringFor(OPERATOR_APP, () => byNetwork(`http://localhost:${listener.port}/bc`, form()))).status).toBe(200);
    const byName = deliveryFetch(new PrivateHosts(['LOCALHOST']));
    expect((await deliveringFor(OPERATOR_APP, () => byName(`http://localhost:${listener.port}/bc`, form()))).status).toBe(200);
    expect(listener.requests).toHaveLength(2);
  });

  it('without the option, a loopback address is refused and nothing connects', async () => {
    const fetch = deliveryFetch(new PrivateHosts([]));
    const error = await refusal(deliveringFor(OPERATOR_APP, () => fetch(`http://127.0.0.1:${listener.port}/bc`, form())));
    expect(error.failure).toBe('refused');
    expect(error.detail).toBe('127.0.0.1 is a special-use address (loopback)');
    expect(listener.connections).toBe(0);
  });

  it('a name that resolves to loopback (localhost, not listed) is refused before connecting', async () => {
    const fetch = deliveryFetch(new PrivateHosts(['10.0.0.0/8', 'billing.internal']));
    const error = await refusal(deliveringFor(OPERATOR_APP, () => fetch(`http://localhost:${listener.port}/bc`, form())));
    expect(error.failure).toBe('refused');
    expect(error.detail).toBe('localhost resolves to 127.0.0.1, a special-use address (loopback)');
    expect(listener.connections).toBe(0);
  });

  it("a tenant's app never gets the operator's exceptions, nor does a request made for no app", async () => {
    const fetch = deliveryFetch(new PrivateHosts(['127.0.0.1', 'localhost']));
    for (const url of [`http://127.0.0.1:${listener.port}/bc`, `http://localhost:${listener.port}/bc`]) {
      expect((await refusal(deliveringFor(TENANT_APP, () => fetch(url, form())))).failure).toBe('refused');
      expect((await refusal(fetch(url, form()))).failure).toBe('refused');
    }
    expect(listener.connections).toBe(0);
  });

  it.each([
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is a special-use address (link-local, cloud metadata)'],
    ['https://10.0.0.1/bc', '10.0.0.1 is a special-use address (private)'],
    ['https://[::1]:8443/bc', '::1 is a special-use address (loopback)'],
    ['https://[::ffff:7f00:1]/bc', '::ffff:7f00:1 is a special-use address (IPv4-mapped)'],
    ['https://[fd00::1]/bc', 'fd00::1 is a special-use address (unique-local)'],
    ['http://0.0.0.0:6379/', '0.0.0.0 is a special-use address (this network)'],
    ['http://2130706433/bc', '127.0.0.1 is a special-use address (loopback)'],
  ])('an IP literal %s is refused at once, before any connection', async (url, detail) => {
    const fetch = deliveryFetch(new PrivateHosts([]));
    const started = Date.now();
    const error = await refusal(deliveringFor(OPERATOR_APP, () => fetch(url, form())));
    expect(error).toMatchObject({ failure: 'refused', detail });
    expect(Date.now() - started).toBeLessThan(200);
  });

  it('does not follow redirects: the 302 is the answer the engine judges', async () => {
    listener.answer = (res) => res.writeHead(302, { location: `http://127.0.0.1:${listener.port}/elsewhere` }).end();
    const fetch = deliveryFetch(new PrivateHosts(['127.0.0.1']));
    const response = await deliveringFor(OPERATOR_APP, () => fetch(`http://127.0.0.1:${listener.port}/bc`, form()));
    expect(response.status).toBe(302);
    expect(listener.requests.map((request) => request.url)).toEqual(['/bc']);
  });

  it('an app that does not answer is given up after 2.5 s', async () => {
    listener.answer = () => undefined;
    const fetch = deliveryFetch(new PrivateHosts(['127.0.0.1']));
    const started = Date.now();
    const error = await refusal(deliveringFor(OPERATOR_APP, () => fetch(`http://127.0.0.1:${listener.port}/bc`, { ...form(), signal: undefined })));
    expect(error).toMatchObject({ failure: 'timeout', detail: `127.0.0.1:${listener.port} gave no answer within 2.5 s` });
    expect(Date.now() - started).toBeGreaterThanOrEqual(2400);
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('a port nobody listens on is unreachable, named by its error code', async () => {
    const port = listener.port;
    await listener.close();
    const fetch = deliveryFetch(new PrivateHosts(['127.0.0.1']));
    const error = await refusal(deliveringFor(OPERATOR_APP, () => fetch(`http://127.0.0.1:${port}/bc`, form())));
    expect(error).toMatchObject({ failure: 'unreachable', detail: `127.0.0.1:${port}: ECONNREFUSED` });
    listener = await listen();
  });

  it('schemes other than http(s) are refused', async () => {
    const fetch = deliveryFetch(new PrivateHosts(['127.0.0.1']));
    expect(await refusal(deliveringFor(OPERATOR_APP, () => fetch('file:///etc/passwd', form())))).toMatchObject({ failure: 'refused' });
  });
});
