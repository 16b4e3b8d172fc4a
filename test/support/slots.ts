/** Redis Cluster's key slot, as the store computes it (adapters/redis/slots.ts). */
export { keySlot } from '../../adapters/redis/slots.js';
