import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/** The largest sealed value `open` looks at (what a cookie or a stored record can hold). */
const MAX_SEALED = 32_768;

/**
 * Values sealed for the browser or the store: AES-256-GCM under a key derived from the keys it is
 * given (the cookie keys, the factor keys) for one use (`label`), bound to what the value is
 * (`purpose`, the additional data), so that a sealed value copied into another cookie, record or
 * use does not open. The first key seals and every key opens, so that keys can rotate. It lives at
 * the records layer so that records (a user's factors) can seal what they store.
 */
export class Sealer {
  readonly #keys: Buffer[];

  constructor(keys: readonly string[], label: string) {
    this.#keys = keys.map((key) => createHmac('sha256', key).update(label).digest());
  }

  /** `value` as JSON, sealed for `purpose` (base64url: fit for a cookie). */
  seal(value: unknown, purpose: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#keys[0]!, iv);
    cipher.setAAD(Buffer.from(purpose));
    const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
  }

  /** What `seal` sealed for `purpose`, or undefined (another purpose, a changed byte, a key no longer known). */
  open<T>(sealed: unknown, purpose: string): T | undefined {
    if (typeof sealed !== 'string' || sealed.length > MAX_SEALED) return undefined;
    const bytes = Buffer.from(sealed, 'base64url');
    if (bytes.length < 29) return undefined;
    for (const key of this.#keys) {
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
        decipher.setAAD(Buffer.from(purpose));
        decipher.setAuthTag(bytes.subarray(bytes.length - 16));
        const plain = Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]);
        return JSON.parse(plain.toString('utf8')) as T;
      } catch {
        // Not this key: the next one.
      }
    }
    return undefined;
  }
}
