/*
 * The `federation` option (enterprise sign-in through each tenant's identity provider), stated here
 * beside the federation (src/options.ts composes it; docs/configuration.md's reference is generated
 * from it).
 */
import { z } from 'zod';

/** The `federation` option: how our server talks to the tenants' identity providers. */
export const federationOptionSchema = z
  .object({
    timeoutMs: z.number().int().min(500).max(30_000).default(5000).meta({
      description: "how long one request to a tenant's identity provider may take (discovery, its keys, the code "
        + 'exchange), connection and answer included; past it the sign-in shows a page saying the provider did not answer',
    }),
    metadataCacheSeconds: z.number().int().min(0).max(86_400).default(3600).meta({
      description: "how long a provider's discovery document and keys are kept before they are fetched again (a "
        + 'signature by a key not yet seen fetches the keys at once); `0` fetches them at every sign-in',
    }),
  })
  .strict()
  .prefault({})
  .meta({
    description: "enterprise sign-in through each tenant's own identity provider ([enterprise sign-in](federation.md))",
  });

/** The resolved `federation` option. */
export type FederationOptions = z.output<typeof federationOptionSchema>;
