import { Readable } from 'node:stream';
import type { Context } from 'koa';
import { InvalidClient, InvalidRequest, PayloadTooLarge } from '../../policies/errors.js';
import { parseMultipart, parseUrlEncoded, readBody } from '../../src/http/request-body.js';
import { parseBasicAuthorization } from '../../policies/client-authentication.js';

const form = (text: string) => Object.fromEntries(parseUrlEncoded(Buffer.from(text)));

describe('parseUrlEncoded', () => {
  it('decodes + and percent escapes', () => {
    expect(form('a=b+c&d=%2F%3D%26')).toEqual({ a: 'b c', d: '/=&' });
  });
  it('drops empty values (RFC 6749 §3.1)', () => {
    expect(form('a=&b=1&c')).toEqual({ b: '1' });
  });
  it.each([
    ['a duplicate', 'a=1&a=2'],
    ['a duplicate even when one is empty', 'a=&a=2'],
    ['a broken escape', 'a=%zz'],
    ['a truncated escape', 'a=%2'],
    ['an escape that is not UTF-8', 'a=%C3%28'],
  ])('refuses %s', (_name, text) => {
    expect(() => form(text)).toThrow(InvalidRequest);
  });
  it('refuses raw bytes that are not UTF-8', () => {
    expect(() => parseUrlEncoded(Buffer.from([0x61, 0x3d, 0xff]))).toThrow(InvalidRequest);
  });
  it('refuses a byte order mark rather than strip it (the engine would read it as part of the first name)', () => {
    expect(() => form('\uFEFFgrant_type=client_credentials')).toThrow(new InvalidRequest('the request body must not start with a byte order mark'));
    expect(form('a=\uFEFF')).toEqual({ a: '\uFEFF' });
  });
});

describe('parseMultipart', () => {
  async function encode(data: FormData): Promise<{ body: Buffer; type: string }> {
    const request = new Request('http://x/', { method: 'POST', body: data });
    return { body: Buffer.from(await request.arrayBuffer()), type: request.headers.get('content-type')! };
  }
  it('reads text fields', async () => {
    const data = new FormData();
    data.set('grant_type', 'client_credentials');
    data.set('scope', 'a b');
    const { body, type } = await encode(data);
    expect(Object.fromEntries(await parseMultipart(body, type))).toEqual({ grant_type: 'client_credentials', scope: 'a b' });
  });
  it('refuses files, duplicates and garbage', async () => {
    const withFile = new FormData();
    withFile.set('f', new Blob(['x']), 'f.txt');
    const file = await encode(withFile);
    await expect(parseMultipart(file.body, file.type)).rejects.toThrow(InvalidRequest);
    const twice = new FormData();
    twice.append('a', '1');
    twice.append('a', '2');
    const dup = await encode(twice);
    await expect(parseMultipart(dup.body, dup.type)).rejects.toThrow(InvalidRequest);
    await expect(parseMultipart(Buffer.from('nonsense'), 'multipart/form-data; boundary=x')).rejects.toThrow(InvalidRequest);
  });
});

describe('parseBasicAuthorization', () => {
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  it('decodes form-encoded credentials (RFC 6749 §2.3.1)', () => {
    expect(parseBasicAuthorization(`Basic ${b64('my%20client:p%3Ass+word')}`)).toEqual({ clientId: 'my client', clientSecret: 'p:ss word' });
    expect(parseBasicAuthorization(`basic ${b64('id:a:b')}`)).toEqual({ clientId: 'id', clientSecret: 'a:b' });
  });
  it.each([
    ['another scheme', `Bearer ${b64('id:secret')}`],
    ['no credentials', 'Basic'],
    ['not base64', 'Basic ***'],
    ['no colon', `Basic ${b64('idsecret')}`],
    ['an empty id', `Basic ${b64(':secret')}`],
    ['an empty secret', `Basic ${b64('id:')}`],
    ['a broken escape', `Basic ${b64('id:%zz')}`],
    ['two spaces', `Basic  ${b64('id:secret')}`],
    ['a NUL in the id', `Basic ${b64('i%00d:secret')}`],
    ['a non-ASCII secret', `Basic ${b64('id:sécret')}`],
  ])('refuses %s with invalid_client', (_name, header) => {
    expect(() => parseBasicAuthorization(header)).toThrow(InvalidClient);
  });
});

describe('readBody', () => {
  /** A request stream that yields `chunks` and ends, with the given declared length. */
  function requestOf(chunks: string[], declared: number | undefined): Context {
    const req = Readable.from(chunks.map((chunk) => Buffer.from(chunk)), { objectMode: false });
    return { req, request: { length: declared } } as unknown as Context;
  }

  it('reads a body of the declared length', async () => {
    expect((await readBody(requestOf(['grant_type=', 'x'], 12), 100)).toString()).toBe('grant_type=x');
  });

  it('refuses a body that ends before its Content-Length: invalid_request', async () => {
    await expect(readBody(requestOf(['grant_type=x'], 200), 1000)).rejects.toThrow(InvalidRequest);
    await expect(readBody(requestOf(['grant_type=x'], 200), 1000)).rejects.toThrow(/does not match Content-Length/);
  });

  it('refuses a declared or a streamed body over the limit: 413', async () => {
    await expect(readBody(requestOf(['a'], 2048), 1024)).rejects.toThrow(PayloadTooLarge);
    await expect(readBody(requestOf(['a'.repeat(600), 'a'.repeat(600)], undefined), 1024)).rejects.toThrow(PayloadTooLarge);
  });
});
