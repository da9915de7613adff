import { createHash, randomBytes } from "node:crypto";
import { expect } from "vitest";

/** Bytes of each racing upload. */
export const RACE_FILE_BYTES = 1000;

/** Where the race runs: the app process that grants and takes the uploads, and the one that deletes. */
export interface RaceTarget {
  /** Base URL of the process the uploads go through (grants, PUTs, completions). */
  uploader: string;
  /** Base URL of the process the DELETE goes to (the same one, or another replica). */
  deleter: string;
  key: string;
  sessionId: string;
  /** Uploads in the race; half of their URLs are handed out before the DELETE, half during it. */
  uploads: number;
}

/** What each upload of the race ended with, and what the DELETE answered. */
export interface RaceOutcome {
  deletion: number;
  /** `<upload-url status>/<PUT status>/<complete status>` per upload, e.g. `200/200/403`. */
  uploads: string[];
}

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** A fetch of `path` on `base` with the race's key, as JSON when `json` is given. */
export function callAs(
  key: string,
  base: string,
  path: string,
  init: { method?: string; json?: unknown } = {},
) {
  return fetch(`${base}${path}`, {
    method: init.method ?? (init.json === undefined ? "GET" : "POST"),
    headers: {
      authorization: `Bearer ${key}`,
      ...(init.json === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
  });
}

/**
 * Registers the session, hands out half of the upload URLs, then runs every upload (PUT and
 * complete, the other half asking for its URL first) at the same time as `DELETE
 * /agents/sessions/:id`, as agents still uploading while their session is deleted would.
 */
export async function raceUploadsWithDeletion(target: RaceTarget): Promise<RaceOutcome> {
  const { uploader, deleter, key, sessionId } = target;
  const call = (base: string, path: string, init: { method?: string; json?: unknown } = {}) =>
    callAs(key, base, path, init);
  expect((await call(uploader, "/agents/sessions", { json: { sessionId } })).status).toBe(201);
  const files = Array.from({ length: target.uploads }, (_, i) => ({
    filename: `race-${i}.txt`,
    body: new Uint8Array(randomBytes(RACE_FILE_BYTES)),
  }));
  const ask = (file: (typeof files)[number]) =>
    call(uploader, "/agents/artifacts/upload-url", {
      json: {
        agentSessionId: sessionId,
        filename: file.filename,
        contentType: "text/plain",
        fileSize: file.body.byteLength,
        sha256: sha256(file.body),
      },
    });
  const early = await Promise.all(files.slice(0, Math.floor(files.length / 2)).map(ask));
  const upload = async (file: (typeof files)[number], i: number): Promise<string> => {
    const granted = early[i] ?? (await ask(file));
    if (granted.status !== 200) return `${granted.status}/-/-`;
    const grant = (await granted.json()) as { url: string; headers: Record<string, string> };
    const put = await fetch(grant.url, { method: "PUT", headers: grant.headers, body: file.body });
    await put.arrayBuffer();
    const complete = await call(uploader, "/agents/artifacts/complete", {
      json: { agentSessionId: sessionId, filename: file.filename },
    });
    await complete.arrayBuffer();
    return `200/${put.status}/${complete.status}`;
  };
  const [deletion, ...uploads] = await Promise.all([
    call(deleter, `/agents/sessions/${sessionId}`, { method: "DELETE" }).then(async (response) => {
      await response.arrayBuffer();
      return response.status;
    }),
    ...files.map(upload),
  ]);
  return { deletion: deletion as number, uploads: uploads as string[] };
}

/**
 * After the race: the id registered again lists nothing, and its whole quota (`limitBytes`) can
 * be reserved at once: nothing the revoked URLs reserved or wrote still counts.
 */
export async function expectRegisteredAgainEmpty(
  target: Pick<RaceTarget, "uploader" | "key" | "sessionId">,
  limitBytes: number,
): Promise<void> {
  const { uploader, key, sessionId } = target;
  expect((await callAs(key, uploader, "/agents/sessions", { json: { sessionId } })).status).toBe(201);
  const listed = await callAs(key, uploader, `/agents/${sessionId}/artifacts`);
  expect(await listed.json()).toEqual({ artifacts: [] });
  const whole = await callAs(key, uploader, "/agents/artifacts/upload-url", {
    json: {
      agentSessionId: sessionId,
      filename: "whole.txt",
      contentType: "text/plain",
      fileSize: limitBytes,
    },
  });
  expect(whole.status, await whole.clone().text()).toBe(200);
}
