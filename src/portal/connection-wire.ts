import type { z } from 'zod';
import type { ConnectionBody } from '../http/wire-connections.js';

/** A connection as the management API gives it (its wire schema, src/http/wire-connections.ts). */
export type ConnectionWire = z.output<typeof ConnectionBody>;
