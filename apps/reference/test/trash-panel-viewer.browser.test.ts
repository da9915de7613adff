// The viewer's trash panel in Chromium, for the kinds beside `session`: an upload its session's
// `DELETE …/uploads` took (kind `upload`, id `<sessionId>/<filename>`, by the key that deleted it)
// and a blob the deployment's garbage collection took (kind `blob`, id its SHA-256, by `gc`).
// Each is listed with who deleted it, its bytes and its purge time; its Restore button brings it
// back (the upload downloadable, the blob readable); purged, it leaves the panel; bob's panel shows
// none of it. The page runs in en-US on UTC, so the purge time reads as written here.

import { createHash, randomUUID } from "node:crypto";
import type { TrashedThing } from "@stowage/tenancy";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumAvailability, launchChromium } from "./browser/chromium.js";
import { startTestApp, type TestApp } from "./support/test-app.js";

const WAIT = { timeout: 30_000 };
const DAY_MS = 24 * 3600 * 1000;
const browserReady = chromiumAvailability();

/** What `GET /trash` lists: tenancy's own type of a thing in the trash. */
type Trashed = TrashedThing;

const NOTES = "hello world";
const SCREENSHOT = "a screenshot nothing names any more";
// Its SHA-256, as `printf %s "$SCREENSHOT" | sha256sum` prints it for these 35 bytes.
const SCREENSHOT_SHA256 = "c9383989250c9394bbc5db702c38f1ab37333d8935d85a168a9c760aaff0102a";

/** "2026-03-04T05:06:07.000Z" → "3/4/2026, 5:06:07 AM": what en-US shows on UTC, any space as one. */
function enUsUtc(iso: string): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})/.exec(iso);
  if (!match) throw new Error(`not an ISO time: ${iso}`);
  const [, year, month, day, hours, minutes, seconds] = match;
  const hour = Number(hours);
  const twelve = hour % 12 === 0 ? 12 : hour % 12;
  return `${Number(month)}/${Number(day)}/${year}, ${twelve}:${minutes}:${seconds} ${hour < 12 ? "AM" : "PM"}`;
}
const oneSpace = (text: string | null) => (text ?? "").replace(/\s+/g, " ");

describe.skipIf(!browserReady.ready)("the viewer's trash panel for uploads and blobs, in Chromium", () => {
  let app: TestApp;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  const sessionId = randomUUID();
  const uploadId = `${sessionId}/notes.txt`;
  let aliceKey = "";
  let aliceKeyId = "";
  let bobKey = "";

  const ok = async (response: Response) => {
    expect(response.status, await response.clone().text()).toBeLessThan(300);
    return response;
  };
  const call = async (key: string, path: string, init: Parameters<TestApp["call"]>[1] = {}) =>
    ok(await app.call(path, { key, ...init }));
  const listed = async (key: string) =>
    (await (await call(key, "/trash")).json()) as { items: Trashed[]; bytes: number };
  const download = async () => {
    const response = await app.call(`/agents/${sessionId}/artifacts/notes.txt/download`, { key: aliceKey });
    if (response.status !== 200) return response.status;
    const { url } = (await response.json()) as { url: string };
    return (await fetch(url)).text();
  };
  const readBlob = async () => {
    const response = await app.call(`/blobs/${SCREENSHOT_SHA256}`, { key: aliceKey });
    return response.status === 200 ? response.text() : response.status;
  };
  /** The session's uploads into the trash, by alice's key. */
  const deleteUploads = async () => {
    const { trash } = (await (
      await call(aliceKey, `/agents/sessions/${sessionId}/uploads`, { method: "DELETE" })
    ).json()) as { trash: { uploads: number; bytes: number } };
    expect(trash).toMatchObject({ uploads: 1, bytes: 11 });
  };
  /** The deployment's garbage collection, which takes the blob nothing names into the trash. */
  const collect = async () => {
    // The blob's time must be a whole second before the collection's start (the grace is 0).
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(await app.server.services.stowage.collectGarbage({ graceMs: 0, singleHost: true })).toMatchObject({
      trashed: 1,
    });
  };
  const row = (kind: string, id: string) =>
    page.locator(`.trash-overview tr[data-kind="${kind}"][data-id="${id}"]`);
  const openPanel = async (key: string) => {
    await page.goto(`${app.url}/#key=${key}`);
    await page.locator(".trash-overview").waitFor();
  };

  beforeAll(async () => {
    app = await startTestApp({ STOWAGE_TRASH_DAYS: "7" });
    const alice = await app.server.services.apiKeys.issue({ kind: "user", id: "alice" });
    aliceKey = alice.apiKey;
    aliceKeyId = alice.record.id;
    bobKey = await app.keyFor({ kind: "user", id: "bob" });
    await call(aliceKey, "/agents/sessions", { json: { sessionId } });
    const body = new TextEncoder().encode(NOTES);
    const grant = (await (
      await call(aliceKey, "/agents/artifacts/upload-url", {
        json: {
          agentSessionId: sessionId,
          filename: "notes.txt",
          contentType: "text/plain",
          fileSize: body.byteLength,
          sha256: createHash("sha256").update(body).digest("hex"),
        },
      })
    ).json()) as { url: string; headers: Record<string, string> };
    await ok(await fetch(grant.url, { method: "PUT", headers: grant.headers, body }));
    const stored = (await (await call(aliceKey, "/blobs", { body: SCREENSHOT })).json()) as { hash: string };
    expect(stored.hash).toBe(SCREENSHOT_SHA256);
    await deleteUploads();
    await collect();
    browser = await launchChromium();
    page = await browser.newPage({
      viewport: { width: 1280, height: 1000 },
      locale: "en-US",
      timezoneId: "UTC",
    });
    page.setDefaultTimeout(WAIT.timeout);
    page.on("pageerror", (err) => pageErrors.push(err.message));
    page.on("console", (message) => {
      if (message.type() === "error") pageErrors.push(message.text());
    });
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it("lists the upload a key deleted and the blob gc took: kind, id, who, bytes, purge time; nothing else", async () => {
    const { items, bytes } = await listed(aliceKey);
    const upload = items.find((item) => item.kind === "upload");
    const blob = items.find((item) => item.kind === "blob");
    expect(upload).toMatchObject({ id: uploadId, by: `key:${aliceKeyId}`, bytes: 11 });
    expect(blob).toMatchObject({ id: SCREENSHOT_SHA256, by: "gc", bytes: 35 });
    expect(items).toHaveLength(2);
    expect(bytes).toBe(46);
    for (const item of [upload!, blob!]) {
      expect(Date.parse(item.purgeAfter) - Date.parse(item.trashedAt)).toBe(7 * DAY_MS);
    }

    await openPanel(aliceKey);
    const uploadRow = row("upload", uploadId);
    await uploadRow.waitFor();
    expect(await uploadRow.locator(".kind").textContent()).toBe("upload");
    expect(await uploadRow.locator(".id").getAttribute("title")).toBe(uploadId);
    expect(await uploadRow.locator(".by").textContent()).toBe(`key:${aliceKeyId}`);
    expect(await uploadRow.locator(".size").textContent()).toBe("11 B");
    expect(oneSpace(await uploadRow.locator(".when").textContent())).toBe(enUsUtc(upload!.purgeAfter));
    expect(await uploadRow.locator(".when").getAttribute("title")).toBe(
      `deleted ${upload!.trashedAt} by key:${aliceKeyId}`,
    );

    const blobRow = row("blob", SCREENSHOT_SHA256);
    expect(await blobRow.locator(".kind").textContent()).toBe("blob");
    expect(await blobRow.locator(".id").getAttribute("title")).toBe(SCREENSHOT_SHA256);
    expect(await blobRow.locator(".by").textContent()).toBe("gc");
    expect(await blobRow.locator(".size").textContent()).toBe("35 B");
    expect(oneSpace(await blobRow.locator(".when").textContent())).toBe(enUsUtc(blob!.purgeAfter));

    expect(await page.locator(".trash-overview tr").count()).toBe(2);
    expect(oneSpace(await page.locator(".trash-overview h3").textContent())).toBe(
      "In the trash (46 B), purged on the date shown",
    );
    expect(pageErrors).toEqual([]);
  });

  it("bob's panel shows none of alice's, and his key restores and purges neither", async () => {
    expect(await listed(bobKey)).toEqual({ items: [], bytes: 0 });
    await openPanel(bobKey);
    const panel = page.locator(".trash-overview");
    await panel.locator(".empty").waitFor();
    expect(await panel.locator(".empty").textContent()).toBe("Nothing of yours is in the trash.");
    expect(await panel.textContent()).not.toContain(sessionId);
    expect(await panel.textContent()).not.toContain(SCREENSHOT_SHA256);
    for (const [kind, id] of [
      ["upload", uploadId],
      ["blob", SCREENSHOT_SHA256],
    ]) {
      const one = `/trash/${kind}/${encodeURIComponent(id!)}`;
      expect((await app.call(`${one}/restore`, { key: bobKey, method: "POST" })).status).toBe(404);
      expect((await app.call(one, { key: bobKey, method: "DELETE" })).status).toBe(404);
    }
    expect(pageErrors).toEqual([]);
  });

  it("restores each with its Restore button: the upload downloads again, the blob reads again", async () => {
    expect(await download()).toBe(404);
    expect(await readBlob()).toBe(404);
    await openPanel(aliceKey);
    for (const [kind, id] of [
      ["upload", uploadId],
      ["blob", SCREENSHOT_SHA256],
    ] as const) {
      const restored = row(kind, id);
      await restored.locator("button.restore").click();
      await expect.poll(() => restored.locator(".status").textContent(), WAIT).toBe("restored");
      expect(await restored.locator("button.restore").count()).toBe(0);
    }
    expect(await download()).toBe(NOTES);
    expect(await readBlob()).toBe(SCREENSHOT);
    expect(await listed(aliceKey)).toEqual({ items: [], bytes: 0 });
    await openPanel(aliceKey);
    await page.locator(".trash-overview .empty").waitFor();
    expect(pageErrors).toEqual([]);
  });

  it("purges each with the panel's Purge button, asked twice: each leaves the panel for good, the upload and the blob gone", async () => {
    await deleteUploads();
    await collect();
    await openPanel(aliceKey);
    await row("upload", uploadId).waitFor();
    await row("blob", SCREENSHOT_SHA256).waitFor();
    expect(await page.locator(".trash-overview tr").count()).toBe(2);
    for (const [kind, id] of [
      ["upload", uploadId],
      ["blob", SCREENSHOT_SHA256],
    ] as const) {
      const purged = row(kind, id);
      const button = purged.locator("button.purge");
      // The first click only asks; nothing is purged until the second.
      await button.click();
      expect(await button.textContent()).toBe("Purge for good?");
      expect((await listed(aliceKey)).items.map((item) => item.id)).toContain(id);
      await button.click();
      await expect.poll(() => purged.locator(".status").textContent(), WAIT).toBe("purged");
      expect(await purged.locator("button").count()).toBe(0);
    }
    await openPanel(aliceKey);
    await page.locator(".trash-overview .empty").waitFor();
    expect(await page.locator(".trash-overview tr").count()).toBe(0);
    expect(await listed(aliceKey)).toEqual({ items: [], bytes: 0 });
    expect(await download()).toBe(404);
    expect(await readBlob()).toBe(404);
    for (const [kind, id] of [
      ["upload", uploadId],
      ["blob", SCREENSHOT_SHA256],
    ]) {
      const restore = `/trash/${kind}/${encodeURIComponent(id!)}/restore`;
      expect((await app.call(restore, { key: aliceKey, method: "POST" })).status).toBe(404);
    }
    expect(pageErrors).toEqual([]);
  });
});
