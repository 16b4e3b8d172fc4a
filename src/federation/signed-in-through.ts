import type { Store } from '../../adapters/types.js';
import type { Sealer } from '../records/sealed.js';

/*
 * WHICH PROVIDER A USER LAST SIGNED IN THROUGH: kept at a federated sign-in (src/endpoints/
 * federation/) so that our sign-out can also sign her out at that provider when its connection asks
 * for it (`signOutUpstream`), with the provider's ID token as the hint its end-session endpoint
 * wants. One entry per user (tenant, sub), replaced by her next federated sign-in, kept as long as
 * a session lives (engine store, with its expiry), the ID token sealed (never stored in clear).
 */

/** The engine-store model of the entries. */
const MODEL = 'FederatedSignIn';

/** A federated sign-in, as our sign-out needs it. */
export interface SignedInThrough {
  connectionId: string;
  /** The provider's ID token (the `id_token_hint` of its end-session request). */
  idToken: string;
  /** When (epoch seconds). */
  at: number;
}

interface Entry {
  connectionId: string;
  sealedIdToken: string;
  at: number;
}

const keyOf = (user: { tenant: string; sub: string }) => `${user.tenant.length}:${user.tenant}:${user.sub}`;

/** The provider each user last signed in through (see above). */
export class SignedInThroughStore {
  constructor(
    private readonly store: Store,
    private readonly sealer: Sealer,
    /** How long an entry is kept: the longest a session lives, in seconds. */
    private readonly ttlSeconds: number,
  ) {}

  /** Remembers that `user` signed in through `connectionId`, with the provider's ID token. */
  async remember(user: { tenant: string; sub: string }, through: SignedInThrough): Promise<void> {
    const key = keyOf(user);
    const entry: Entry = { connectionId: through.connectionId, sealedIdToken: this.sealer.seal(through.idToken, `federated-id-token:${key}`), at: through.at };
    await this.store.engine(MODEL).upsert(key, entry as never, this.ttlSeconds);
  }

  /** Her last federated sign-in, or undefined (none, expired, or its seal no longer opens). */
  async of(user: { tenant: string; sub: string }): Promise<SignedInThrough | undefined> {
    const key = keyOf(user);
    const entry = (await this.store.engine(MODEL).find(key)) as unknown as Entry | undefined;
    if (!entry || typeof entry.connectionId !== 'string') return undefined;
    const idToken = this.sealer.open<string>(entry.sealedIdToken, `federated-id-token:${key}`);
    return idToken === undefined ? undefined : { connectionId: entry.connectionId, idToken, at: entry.at };
  }

  /** Forgets it (her sign-out is done). */
  async forget(user: { tenant: string; sub: string }): Promise<void> {
    await this.store.engine(MODEL).destroy(keyOf(user));
  }
}
