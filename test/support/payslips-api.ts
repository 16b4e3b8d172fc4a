import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import express from 'express';
import * as light from '../../src/resource-server/index.js';

/* The payslip API of the resource-server kit's tests: an API on a real socket behind the kit. */

/** A served API: its `/payslips` URL, and close (its connections ended). */
export interface PayslipsApi {
  name: string;
  url: string;
  close(): Promise<void>;
}

/** `listener` on 127.0.0.1 at a free port: the URL of its `/payslips`, and close. */
export async function servePayslips(listener: RequestListener): Promise<Omit<PayslipsApi, 'name'>> {
  const http: Server = createServer(listener);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/payslips`,
    close: () => new Promise<void>((resolve) => { http.closeAllConnections(); http.close(() => resolve()); }),
  };
}

/**
 * The payslip API in Koa, then in Express (named by `name`), each behind `kit`'s middleware with the
 * verifier `verifierOf` gives it (called once for each) and answering the token's `{ sub }`.
 */
export async function payslipApis(
  verifierOf: () => light.TokenVerifier,
  kit: Pick<typeof light, 'authenticate' | 'expressAuthenticate'> = light,
  name: (framework: 'Koa' | 'Express') => string = (framework) => framework,
): Promise<PayslipsApi[]> {
  const koa = new Koa();
  koa.use(kit.authenticate(verifierOf()));
  koa.use((ctx) => { ctx.body = { sub: (ctx.state as light.AuthState).auth.sub }; });
  const app = express();
  app.get('/payslips', kit.expressAuthenticate(verifierOf()), (req, res) => { res.json({ sub: req.auth?.sub }); });
  return [{ name: name('Koa'), ...await servePayslips(koa.callback()) }, { name: name('Express'), ...await servePayslips(app) }];
}
