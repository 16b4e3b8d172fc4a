import { createHmac } from 'node:crypto';
import { constantTimeEqual } from '../../policies/constant-time.js';

/*
 * The browser's address, from the portal to our APIs. The portal calls the APIs from the server
 * itself, so the API sees the server's address; the audit trail wants the user's. The portal
 * states it in a header the APIs believe only with its MAC (a key derived from the cookie keys,
 * which only the server has) and only for a minute: anyone else's header is ignored.
 */

/** The header that carries it. */
export const PORTAL_ADDRESS_HEADER = 'x-talent-auth-portal-address';

const MAX_AGE_MS = 60_000;

/** Signs and checks the forwarded address. */
export class ForwardedAddress {
  readonly #key: Buffer;

  constructor(cookieKey: string) {
    this.#key = createHmac('sha256', cookieKey).update('talent-auth portal address').digest();
  }

  #mac(address: string, time: string): Buffer {
    return createHmac('sha256', this.#key).update(`${address}\n${time}`).digest();
  }

  /** The header's value for `address`, now. */
  sign(address: string, now = Date.now()): string {
    return `${encodeURIComponent(address)}~${now}~${this.#mac(address, String(now)).toString('base64url')}`;
  }

  /** The address a header states, when its MAC is ours and it is recent; undefined otherwise. */
  verify(value: string | undefined, now = Date.now()): string | undefined {
    const [encoded, time, mac] = (value ?? '').split('~');
    if (!encoded || !time || !mac || !/^\d{1,15}$/.test(time) || Math.abs(now - Number(time)) > MAX_AGE_MS) return undefined;
    let address: string;
    try {
      address = decodeURIComponent(encoded);
    } catch {
      return undefined;
    }
    return constantTimeEqual(Buffer.from(mac, 'base64url'), this.#mac(address, time)) && address.length <= 64 ? address : undefined;
  }
}
