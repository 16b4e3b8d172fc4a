import { highSecurityProblems } from '../../policies/high-security.js';
import type { AppRegistrations } from './app-registrations.js';
import type { ClientConfigurations } from './client-configurations.js';

/**
 * The IDs of `tenant`'s clients (client configurations, then its apps, oldest first) whose
 * settings the high-security profile does not allow (policies/high-security.ts): what keeps the
 * tenant from switching to it (src/records/tenant-settings.ts).
 */
export async function nonConformingClients(
  tenant: string,
  clients: Pick<ClientConfigurations, 'list'>,
  apps: Pick<AppRegistrations, 'listByTenant'>,
): Promise<string[]> {
  const [machines, own] = await Promise.all([clients.list(tenant), apps.listByTenant(tenant)]);
  return [
    ...machines.filter((client) => highSecurityProblems({ kind: 'client', ...client }).length > 0).map((client) => client.clientId),
    ...own.filter((app) => highSecurityProblems({ kind: 'app', ...app }).length > 0).map((app) => app.clientId),
  ];
}
