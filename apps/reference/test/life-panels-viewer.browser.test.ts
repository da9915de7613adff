// The viewer's first page shows what expires soon, what is in the trash and what was deleted
// lately, in Chromium: a stored session due in 7 days in the expiring panel, a session in the
// trash (restored from there with its button), a deleted session's rows (by the key that deleted
// it) in the deleted panel, and nothing of another principal's.
import { randomUUID } from "node:crypto";
import { compressChunks, toTransport } from "@stowage/sessions";
import { textItem } from "@stowage/thread-items";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumAvailability, launchChromium } from "./browser/chromium.js";
import { startTestApp, type TestApp } from "./support/test-app.js";

const WAIT = { timeout: 30_000 };
const browserReady = chromiumAvailability();

describe.skipIf(!browserReady.ready)("the viewer's expiring and deleted panels, in Chromium", () => {
  let app: TestApp;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  const stored = randomUUID();
  const deleted = randomUUID();
  const bobs = randomUUID();
  const trashed = randomUUID();
  const bobsTrashed = randomUUID();
  let aliceKey = "";

  const call = async (key: string, path: string, init: Parameters<TestApp["call"]>[1] = {}) => {
    const response = await app.call(path, { key, ...init });
    expect(response.status, await response.clone().text()).toBeLessThan(300);
  };
  const storeSession = async (key: string, sessionId: string) => {
    const raw = new TextEncoder().encode(`${JSON.stringify({ type: "user", content: "hi" })}\n`);
    const blob = await compressChunks("gzip", [raw]);
    await call(key, `/requests/req-${sessionId.slice(0, 8)}/session-blobs`, {
      json: toTransport({ sessionId, codec: "gzip", blob, rawSizeBytes: raw.byteLength }),
    });
  };

  beforeAll(async () => {
    app = await startTestApp();
    const alice = await app.keyFor({ kind: "user", id: "alice" });
    const bob = await app.keyFor({ kind: "user", id: "bob" });
    await storeSession(alice, stored);
    await call(alice, "/agents/sessions", { json: { sessionId: deleted } });
    await call(alice, `/threads/${deleted}/main/items`, { json: textItem("to be deleted") });
    await call(alice, `/agents/sessions/${deleted}`, { method: "DELETE" });
    // The app's tests delete at once unless told: these two go to their owners' trash for 7 days.
    await call(alice, "/agents/sessions", { json: { sessionId: trashed } });
    await call(alice, `/agents/sessions/${trashed}?trashDays=7`, { method: "DELETE" });
    await call(bob, "/agents/sessions", { json: { sessionId: bobsTrashed } });
    await call(bob, `/agents/sessions/${bobsTrashed}?trashDays=7`, { method: "DELETE" });
    aliceKey = alice;
    // Bob's own stored session and deletion: never on alice's page.
    await storeSession(bob, bobs);
    await call(bob, "/agents/sessions", { json: { sessionId: bobs } });
    await call(bob, `/agents/sessions/${bobs}`, { method: "DELETE" });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    page.setDefaultTimeout(WAIT.timeout);
    page.on("pageerror", (err) => pageErrors.push(err.message));
    page.on("console", (message) => {
      if (message.type() === "error") pageErrors.push(message.text());
    });
    await page.goto(`${app.url}/#key=${alice}`);
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it("lists the stored session due within 7 days in the expiring panel", async () => {
    const row = page.locator(`.expiring-overview tr[data-id="${stored}"]`);
    await row.waitFor();
    expect(await row.locator(".kind").textContent()).toBe("stored session");
    expect(await page.locator(".expiring-overview tr").count()).toBe(1);
  });

  it("lists the session in the trash, none of bob's, and its Restore button brings it back", async () => {
    const row = page.locator(`.trash-overview tr[data-id="${trashed}"]`);
    await row.waitFor();
    expect(await row.locator(".kind").textContent()).toBe("session");
    expect(await row.locator(".by").textContent()).toMatch(/^key:/);
    expect(await page.locator(".trash-overview tr").count()).toBe(1);
    expect(await page.locator(".trash-overview").textContent()).not.toContain(bobsTrashed);
    expect((await app.call(`/sessions/${trashed}`, { key: aliceKey })).status).toBe(404);
    await row.locator("button.restore").click();
    await expect.poll(() => row.locator(".status").textContent(), WAIT).toBe("restored");
    expect((await app.call(`/sessions/${trashed}`, { key: aliceKey })).status).toBe(200);
    expect(pageErrors).toEqual([]);
  });

  it("lists the deleted session's rows, newest first, with who deleted them and why", async () => {
    const rows = page.locator(`.deleted-overview tr[data-id="${deleted}"]`);
    await expect.poll(() => rows.count(), WAIT).toBeGreaterThanOrEqual(2);
    const kinds = await rows.locator(".kind").allTextContents();
    expect(kinds).toContain("session");
    expect(kinds).toContain("threads");
    for (const by of await rows.locator(".by").allTextContents()) expect(by).toMatch(/^key:/);
    expect(await page.locator(".deleted-overview").textContent()).not.toContain(bobs);
    expect(await page.locator(".expiring-overview").textContent()).not.toContain(bobs);
    expect(pageErrors).toEqual([]);
  });
});
