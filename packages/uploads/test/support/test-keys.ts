import { randomBytes } from "node:crypto";
import type { OperationOptions, Principal } from "@stowage/core";

/**
 * API keys for the upload service's tests: what `auth.authenticate` needs, and nothing of the real
 * keys' format or storage (those are `@stowage/tenancy`'s, tested there).
 */
export function createTestKeys() {
  const principals = new Map<string, Principal>();
  return {
    async issue(principal: Principal): Promise<{ apiKey: string }> {
      const apiKey = `test_${randomBytes(16).toString("base64url")}`;
      principals.set(apiKey, { kind: principal.kind, id: principal.id });
      return { apiKey };
    },
    authenticate: async (apiKey: string | null | undefined, _options?: OperationOptions) =>
      (apiKey && principals.get(apiKey)) || null,
  };
}
