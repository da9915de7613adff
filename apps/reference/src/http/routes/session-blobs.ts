import { StowageError } from "@stowage/core";
import {
  assembleSessionBlob,
  chunkSessionBlob,
  fromTransport,
  type SessionAgent,
  type SessionBlobRecord,
  type SessionCodec,
  toTransport,
  verifySessionBlob,
} from "@stowage/sessions";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { AppConfig } from "../../config.js";
import { logSessionActivity, sessionActivityEntry } from "../../observability/session-activity-log.js";
import { type AppContext, type AppEnv, jsonBody } from "../context.js";
import { sessionBlobJsonBody, tooLarge } from "../limits.js";
import type { RequestLogger } from "../request-log.js";

/**
 * The headers of the raw form: the blob is the body, what the JSON form carries beside it is here.
 * `x-stowage-request-id`, `-created-at` and `-expires-at` only on answers.
 */
export const SESSION_BLOB_HEADERS = {
  sessionId: "x-stowage-session-id",
  codec: "x-stowage-session-codec",
  rawSizeBytes: "x-stowage-session-raw-size-bytes",
  agentType: "x-stowage-agent-type",
  requestId: "x-stowage-request-id",
  createdAt: "x-stowage-created-at",
  expiresAt: "x-stowage-expires-at",
} as const;

const RAW_TYPE = "application/octet-stream";

const isRawForm = (c: AppContext) => c.req.header("content-type")?.split(";")[0]?.trim() === RAW_TYPE;

/** The record without its blob, as POST answers it. */
function summary(record: SessionBlobRecord) {
  return {
    id: record.id,
    requestId: record.requestId,
    sessionId: record.sessionId,
    agentType: record.agentType,
    codec: record.codec,
    blobSizeBytes: record.blobSizeBytes,
    rawSizeBytes: record.rawSizeBytes,
    storedBytes: record.storedBytes,
    expiresAt: record.expiresAt,
  };
}

/**
 * The latest live session of the request in the form it was sent: a capture the server keeps as
 * chunks is assembled from the caller's blobs (the same files, each checked against its sha256;
 * a chunk the caller does not hold is INTEGRITY / `MISSING_BLOB`, never a file with a hole). The
 * read is the request's last restore: logged and recorded, with the files its manifest lists.
 */
async function latestAssembled(
  c: AppContext,
  log: RequestLogger,
  check: (assembled: SessionBlobRecord) => void,
): Promise<SessionBlobRecord> {
  const startedAt = performance.now();
  const requestId = c.req.param("requestId")!;
  const tenant = c.get("tenant");
  const signal = c.req.raw.signal;
  const latest = await tenant.sessionBlobs.getLatestForRequest(requestId, { signal });
  if (!latest) throw new StowageError("NOT_FOUND", `no live session for request ${requestId}`);
  const assembled = await assembleSessionBlob(latest, { blobs: tenant.blobs, signal });
  check(assembled);
  // A chunked record's manifest is read alone (its chunks were checked just now).
  const { manifest } = await verifySessionBlob(latest, { signal });
  await recordActivity(c, log, "restore", {
    sessionId: latest.sessionId,
    requestId,
    agent: latest.agentType,
    versionSource: manifest,
    fileCount: manifest.files.length,
    rawBytes: latest.rawSizeBytes,
    storedBytes: latest.storedBytes,
    startedAt,
  });
  return assembled;
}

/** TOO_LARGE (`USE_RAW_FORM`) when the blob is over the JSON form's limit. */
function assertFitsJsonForm(latest: SessionBlobRecord, limitBytes: number): void {
  if (latest.blobSizeBytes <= limitBytes) return;
  throw new StowageError(
    "TOO_LARGE",
    `the session's blob (${latest.blobSizeBytes} bytes) is larger than the JSON form's limit of ${limitBytes} bytes; ask for ?format=raw`,
    { reason: "USE_RAW_FORM", details: { limitBytes, blobSizeBytes: latest.blobSizeBytes } },
  );
}

/** One log line for a capture or restore, and the request's last one of its kind in the tenant. */
async function recordActivity(
  c: AppContext,
  log: RequestLogger,
  kind: "capture" | "restore",
  measure: Parameters<typeof sessionActivityEntry>[0],
): Promise<void> {
  const entry = sessionActivityEntry(measure);
  logSessionActivity(log, kind, entry, { httpRequestId: c.get("requestId" as never) });
  try {
    await c.get("tenant").sessionActivity.record(kind, entry, { signal: c.req.raw.signal });
  } catch (err) {
    // The capture is stored (or the restore served) already: a failed record must not turn it
    // into an error the client would retry. The log line above still says what happened.
    log.error(
      {
        sessionId: entry.sessionId,
        requestId: entry.requestId,
        error: err instanceof Error ? err.message : String(err),
      },
      `could not record the ${kind} as the request's last`,
    );
  }
}

/** The raw form's body and headers: the session blob's bytes, never base64 inside a JSON string. */
async function rawSession(c: AppContext) {
  const header = (name: string) => c.req.header(name);
  const rawSize = header(SESSION_BLOB_HEADERS.rawSizeBytes) ?? "";
  if (!/^\d{1,15}$/.test(rawSize)) {
    throw new StowageError(
      "INVALID_INPUT",
      `${SESSION_BLOB_HEADERS.rawSizeBytes} must be the decompressed size in bytes, got ${JSON.stringify(rawSize)}`,
    );
  }
  // The repository checks every field (and reads the blob through) before storing it.
  return {
    sessionId: header(SESSION_BLOB_HEADERS.sessionId) as string,
    codec: (header(SESSION_BLOB_HEADERS.codec) ?? "gzip") as SessionCodec,
    rawSizeBytes: Number(rawSize),
    // No header: Claude Code's, as the design document's blobs (and fromTransport) read it.
    agentType: header(SESSION_BLOB_HEADERS.agentType) ?? "claude-code",
    blob: new Uint8Array(await c.req.arrayBuffer()),
  };
}

/**
 * Session blobs of ephemeral containers: stored per request, fetched for the follow-up run, in
 * the caller's tenant only (another principal's request ids are not there: it can neither read
 * nor overwrite nor delete them). Two forms: the design document's JSON (`sessionBlob` in base64),
 * and a raw form (the blob is the body, the rest in `x-stowage-*` headers) that holds one copy of
 * the blob in memory instead of its base64 string and the parsed JSON.
 */
export function sessionBlobRoutes(
  config: Pick<AppConfig, "sessionBlobLimitBytes" | "bodyLimitBytes" | "sessionBlobChunks">,
  log: RequestLogger,
) {
  const app = new Hono<AppEnv>();
  const rawLimit = bodyLimit({
    maxSize: config.sessionBlobLimitBytes,
    onError: tooLarge(config.sessionBlobLimitBytes),
  });
  const jsonBudget = sessionBlobJsonBody(config.bodyLimitBytes);

  // The container's response: { sessionId, sessionBlob (base64), sessionCodec, sessionRawSizeBytes,
  // agentType }, or the design document's { sessionId, sessionBlob } (one gzipped Claude Code
  // transcript); or the raw form (content-type application/octet-stream). The repository reads the
  // blob through before storing it: one that could not be restored is refused now (400/413/422),
  // never found out at the follow-up run.
  app.post(
    "/requests/:requestId/session-blobs",
    // The raw form up to the session limit; the JSON form within its JSON budget, read as it comes.
    (c, next) => (isRawForm(c) ? rawLimit(c, next) : next()),
    async (c) => {
      const startedAt = performance.now();
      const session = isRawForm(c) ? await rawSession(c) : fromTransport(await jsonBody(c, jsonBudget));
      const tenant = c.get("tenant");
      const signal = c.req.raw.signal;
      // Kept as chunks in the caller's blobs: a follow-up's session holds the previous one, and
      // only its new chunks are stored. Read through first, as the repository would (a blob that
      // could not be restored is refused, nothing of it kept); a chunked archive is not taken from
      // a client (INVALID_INPUT, CHUNKED_BLOB): its refs would name chunks the server never checked.
      // With STOWAGE_SESSION_BLOB_CHUNKS off, the row holds the blob as sent.
      const stored = config.sessionBlobChunks
        ? await chunkSessionBlob(session, {
            blobs: tenant.blobs,
            agent: session.agentType as SessionAgent,
            signal,
          })
        : session;
      const { codec, blob, rawSizeBytes } = stored;
      // The files it holds, for its log line: a chunked archive's manifest alone; a blob kept as
      // sent is read through as the repository reads it (and refused as it would refuse it).
      const { manifest } = await verifySessionBlob(stored, {
        agent: session.agentType as SessionAgent,
        signal,
      });
      const record = await tenant.sessionBlobs.create(
        {
          ...session,
          requestId: c.req.param("requestId"),
          codec,
          blob,
          rawSizeBytes,
          ...("storedBytes" in stored ? { storedBytes: stored.storedBytes } : {}),
        },
        { signal },
      );
      await recordActivity(c, log, "capture", {
        sessionId: record.sessionId,
        requestId: record.requestId,
        agent: record.agentType,
        versionSource: manifest,
        fileCount: manifest.files.length,
        rawBytes: record.rawSizeBytes,
        storedBytes: record.storedBytes,
        startedAt,
      });
      return c.json(summary(record), 201);
    },
  );

  // The follow-up run's input: the latest live session of the request. `?format=raw`: the blob as
  // the body, the rest in headers. JSON (the design document's form) up to the JSON body limit:
  // its base64 string and the serialized answer cost several times the blob.
  app.get("/requests/:requestId/session-blobs/latest", async (c) => {
    const format = c.req.query("format") ?? "json";
    if (format !== "json" && format !== "raw") {
      throw new StowageError("INVALID_INPUT", `format must be json or raw, got ${JSON.stringify(format)}`);
    }
    // A JSON answer too large to give is refused before the read counts as a restore.
    const latest = await latestAssembled(c, log, (assembled) => {
      if (format === "json") assertFitsJsonForm(assembled, config.bodyLimitBytes);
    });
    if (format === "raw") {
      const { blob } = latest;
      return new Response(blob, {
        headers: {
          "content-type": RAW_TYPE,
          "content-length": String(blob.byteLength),
          "cache-control": "no-store",
          [SESSION_BLOB_HEADERS.sessionId]: latest.sessionId,
          [SESSION_BLOB_HEADERS.codec]: latest.codec,
          [SESSION_BLOB_HEADERS.rawSizeBytes]: String(latest.rawSizeBytes),
          [SESSION_BLOB_HEADERS.agentType]: latest.agentType,
          [SESSION_BLOB_HEADERS.requestId]: latest.requestId,
          [SESSION_BLOB_HEADERS.createdAt]: latest.createdAt.toISOString(),
          ...(latest.expiresAt ? { [SESSION_BLOB_HEADERS.expiresAt]: latest.expiresAt.toISOString() } : {}),
        },
      });
    }
    // toTransport carries the agent (agentType) with the blob.
    return c.json({ ...toTransport(latest), createdAt: latest.createdAt, expiresAt: latest.expiresAt });
  });

  // What is stored for a session id (its latest live record), without the blob: the viewer shows
  // the agent, sizes and expiry.
  app.get("/session-blobs/:sessionId", async (c) => {
    const sessionId = c.req.param("sessionId");
    const record = await c.get("tenant").sessionBlobs.getBySessionId(sessionId, { signal: c.req.raw.signal });
    if (!record) throw new StowageError("NOT_FOUND", `no live stored session ${sessionId}`);
    return c.json({
      sessionId: record.sessionId,
      requestId: record.requestId,
      agentType: record.agentType,
      codec: record.codec,
      blobSizeBytes: record.blobSizeBytes,
      rawSizeBytes: record.rawSizeBytes,
      storedBytes: record.storedBytes,
      createdAt: record.createdAt,
      expiresAt: record.expiresAt,
    });
  });

  return app;
}
