import { type ObjectStore, type OperationOptions, StowageError } from "@stowage/core";
import { assertArtifactId, assertPrincipal, type Principal, samePrincipal } from "@stowage/storage-s3";

/**
 * Which user or org each agent session belongs to. The first principal to claim a session owns
 * it (a create-only write decides races); everyone else gets FORBIDDEN.
 */
export function createSessionOwners(store: ObjectStore) {
  const keyOf = (sessionId: string) => `${sessionId}.json`;

  async function ownerOf(sessionId: string, options: OperationOptions = {}): Promise<Principal | null> {
    assertArtifactId(sessionId, "sessionId");
    const bytes = await store.get(keyOf(sessionId), options);
    if (!bytes) return null;
    const owner = JSON.parse(new TextDecoder().decode(bytes)) as unknown;
    assertPrincipal(owner, "session owner");
    return owner;
  }

  return {
    ownerOf,
    /** Registers `sessionId` to `principal`; idempotent for the owner, FORBIDDEN for anyone else. */
    async claim(sessionId: string, principal: Principal, options: OperationOptions = {}): Promise<void> {
      assertArtifactId(sessionId, "sessionId");
      assertPrincipal(principal);
      const record = new TextEncoder().encode(JSON.stringify({ kind: principal.kind, id: principal.id }));
      try {
        await store.put(keyOf(sessionId), record, { ...options, ifNoneMatch: "*" });
      } catch (err) {
        if (!StowageError.is(err, "ALREADY_EXISTS")) throw err;
        const owner = await ownerOf(sessionId, options);
        if (!owner || !samePrincipal(owner, principal)) {
          throw new StowageError(
            "FORBIDDEN",
            `session ${sessionId} belongs to another ${owner?.kind ?? "principal"}`,
          );
        }
      }
    },
  };
}

export type SessionOwners = ReturnType<typeof createSessionOwners>;
