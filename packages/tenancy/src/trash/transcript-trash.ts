import { describeValue, type OperationOptions, StowageError } from "@stowage/core";
import type { TrashedTranscript } from "@stowage/sessions";
import { type AgentSdkSessions, SDK_DELETED_BY } from "../agent-sdk-sessions.js";
import type { TenantBase } from "../create-stowage.js";
import type { SessionDeletionReport } from "../delete-session.js";
import type { ExpiredTrash } from "./expired-trash.js";
import type { TrashedThing } from "./trash-entries.js";

// Transcripts the Agent SDK deleted from the principal's SessionStore (the table's
// `agentSdkSessions`) wait in that store's trash; the principal's trash lists them (kind
// `transcript`, id `<projectKey>/<trashId>`) beside everything else it deleted.

/** `<projectKey>/<trashId>`, split; INVALID_INPUT otherwise (the store checks each part). */
function transcriptIdParts(id: unknown): { projectKey: string; trashId: string } {
  const slash = typeof id === "string" ? id.indexOf("/") : -1;
  if (typeof id !== "string" || slash <= 0 || id.indexOf("/", slash + 1) >= 0) {
    throw new StowageError(
      "INVALID_INPUT",
      `a transcript in the trash is named <projectKey>/<trashId>, got ${describeValue(id)}`,
      { reason: "INVALID_TRANSCRIPT_ID" },
    );
  }
  return { projectKey: id.slice(0, slash), trashId: id.slice(slash + 1) };
}

function trashedTranscript(trashed: TrashedTranscript): TrashedThing {
  return {
    kind: "transcript",
    id: `${trashed.projectKey}/${trashed.trashId}`,
    trashedAt: trashed.trashedAt,
    purgeAfter: trashed.purgeAfter,
    // The store keeps no one: a delete through the SDK passes no one.
    by: SDK_DELETED_BY,
    bytes: trashed.bytes,
  };
}

const sessionsOf = (tenant: TenantBase) =>
  (tenant as TenantBase & { agentSdkSessions: AgentSdkSessions }).agentSdkSessions;

const notInTrash = (id: unknown) =>
  new StowageError("NOT_FOUND", `nothing in the trash is transcript ${describeValue(id)}`, {
    reason: "NOT_IN_TRASH",
  });

/** The trash of Agent SDK transcripts (kind `transcript`); empty where the table has no such store. */
export function transcriptTrash(inTable: boolean): ExpiredTrash {
  const sessions = (tenant: TenantBase, id: unknown) => {
    const parts = transcriptIdParts(id);
    if (!inTable) throw notInTrash(id);
    return { store: sessionsOf(tenant), ...parts };
  };
  return {
    list: async (tenant, options: OperationOptions) =>
      inTable ? (await sessionsOf(tenant).listAllTrash(options)).map(trashedTranscript) : [],
    async restore(tenant, id, options) {
      const { store, projectKey, trashId } = sessions(tenant, id);
      return trashedTranscript(await store.restoreFromTrash(projectKey, trashId, options));
    },
    async purge(tenant, id, options): Promise<SessionDeletionReport> {
      const { store, projectKey, trashId } = sessions(tenant, id);
      const purged = await store.purgeFromTrash(projectKey, trashId, options);
      return {
        sessionId: purged.sessionId,
        deleted: { agentSdkSessions: { transcripts: 1, deletedBytes: purged.bytes } },
      };
    },
  };
}
