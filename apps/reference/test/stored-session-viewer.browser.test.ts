// Stored sessions in the web viewer, in Chromium: real transcripts (../shared/real-transcripts)
// captured and stored through the API, opened from the sidebar as threads, paged, with their images,
// their subagents and their files as downloads. Each step follows from the previous one on one page.
import { readFile } from "node:fs/promises";
import { type RealRecord, realTranscripts } from "@stowage/test-support";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumAvailability, launchChromium } from "./browser/chromium.js";
import {
  CLAUDE_MAIN,
  CLAUDE_SUBAGENT,
  CODEX_ROLLOUT,
  type StoredRealSession,
  SUBAGENT_ID,
  storeRealSessions,
} from "./support/real-stored-sessions.js";
import { startTestApp, type TestApp } from "./support/test-app.js";

/** Where the test leaves its screenshots, to look at the page. */
const SCREENSHOT_DIR = process.env.STOWAGE_SCREENSHOT_DIR || "/tmp";
/** How long a step waits for the page: generous, for a CI machine shared with other suites. */
const WAIT = { timeout: 30_000 };
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

// The test typechecks without the DOM library: these are the few browser shapes its page functions use.
type DetailsElement = { open: boolean };
type ImageElement = { naturalWidth: number; naturalHeight: number };
type ScrollingElement = { scrollWidth: number; clientWidth: number };

const real = realTranscripts("stored-session viewer");
const browserReady = chromiumAvailability();

/** The ids of the tool calls in a Claude Code transcript's records, in order. */
const toolUseIds = (records: readonly RealRecord[]): string[] =>
  records.flatMap((record) =>
    record.type === "assistant" && Array.isArray(record.message?.content)
      ? record.message.content
          .filter((block: RealRecord) => block.type === "tool_use")
          .map((block: RealRecord) => block.id)
      : [],
  );

describe.skipIf(!browserReady.ready || !real.present)(
  "stored sessions in the web viewer, in Chromium",
  () => {
    let app: TestApp;
    let browser: Browser;
    let page: Page;
    let stored: Awaited<ReturnType<typeof storeRealSessions>>;
    let alice: string;
    const pageErrors: string[] = [];

    const open = async (session: StoredRealSession) => {
      await page.locator(`ul.stored-sessions a[href="#stored=${session.sessionId}"]`).click();
      await page.locator("h2", { hasText: `Stored session ${session.sessionId}` }).waitFor();
    };
    /** Shows every page of the open transcript, then the ids of its tool cards in page order. */
    const showAll = async (): Promise<string[]> => {
      const more = page.locator("button.load-more");
      await page.locator(".transcript-status", { hasText: "entries" }).waitFor();
      while (await more.isVisible()) {
        const before = await page.locator(".transcript-status").textContent();
        await more.click();
        await expect.poll(() => page.locator(".transcript-status").textContent(), WAIT).not.toBe(before);
      }
      return page
        .locator("section.stored-transcript article.tool")
        .evaluateAll((cards) => cards.map((card) => card.getAttribute("data-invocation-id") ?? ""));
    };
    const screenshot = async (name: string) => {
      const bytes = await page.screenshot({ path: `${SCREENSHOT_DIR}/${name}`, fullPage: false });
      expect(bytes.subarray(0, 8)).toEqual(PNG_SIGNATURE);
    };

    beforeAll(async () => {
      app = await startTestApp();
      alice = await app.keyFor({ kind: "user", id: "alice" });
      stored = await storeRealSessions(app, alice, real);
      browser = await launchChromium();
      const context = await browser.newContext({
        viewport: { width: 1280, height: 1000 },
        acceptDownloads: true,
      });
      context.setDefaultTimeout(WAIT.timeout);
      page = await context.newPage();
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

    it("shows the stored sessions on the first page, each with its sizes and expiry", async () => {
      const rows = page.locator(".stored-overview tr");
      await expect.poll(() => rows.count(), WAIT).toBe(3);
      for (const session of [stored.withSubagent, stored.large, stored.codex]) {
        const row = page.locator(`.stored-overview tr[data-session-id="${session.sessionId}"]`);
        expect(await row.locator("a").getAttribute("href")).toBe(`#stored=${session.sessionId}`);
        expect(await row.locator(".size").textContent()).toMatch(
          /^[\d.]+ (B|KiB|MiB), [\d.]+ (B|KiB|MiB) stored$/,
        );
        expect(await row.locator(".expires").textContent()).toMatch(/^until /);
      }
      expect(await page.locator(".recent-sessions .empty").isVisible()).toBe(true);
      // The table fits its panel: nothing is cut at the page's edge.
      const panel = page.locator(".stored-overview");
      expect(
        await panel.evaluate(
          (element) =>
            (element as unknown as ScrollingElement).scrollWidth <=
            (element as unknown as ScrollingElement).clientWidth,
        ),
      ).toBe(true);
      await screenshot("stowage-viewer-home.png");
    });

    it("lists every stored session as a link with its agent", async () => {
      const links = page.locator("ul.stored-sessions a");
      await expect.poll(() => links.count(), WAIT).toBe(3);
      expect(await links.evaluateAll((all) => all.map((link) => link.getAttribute("href")).sort())).toEqual(
        [stored.withSubagent, stored.large, stored.codex]
          .map((session) => `#stored=${session.sessionId}`)
          .sort(),
      );
    });

    it("opens a Claude Code session: its record, its files, its main transcript with the tool calls folded", async () => {
      // A follow-up run's read of it: the request's last restore.
      const { requestId } = stored.withSubagent;
      const restoreRead = await app.call(`/requests/${requestId}/session-blobs/latest?format=raw`, {
        key: alice,
      });
      expect(restoreRead.status).toBe(200);
      await restoreRead.arrayBuffer();
      await open(stored.withSubagent);
      expect(await page.locator(".stored-record .agent-type").textContent()).toBe("claude-code");
      // The last capture (when, by which agent and version, files, sizes) and the last restore.
      const activity = page.locator(".stored-activity");
      await activity.waitFor();
      expect(await activity.locator(".last-capture").textContent()).toMatch(
        new RegExp(
          `^Captured .+ by claude-code( [\\w.+-]+)?: ${stored.withSubagent.files.size} files, [\\d.]+ (B|KiB|MiB) \\([\\d.]+ (B|KiB|MiB) stored\\) in [\\d.]+ s$`,
        ),
      );
      expect(await activity.locator(".last-restore").textContent()).toMatch(
        new RegExp(`^last restored .+ \\(${stored.withSubagent.files.size} files in [\\d.]+ s\\)$`),
      );
      expect(
        await page
          .locator(".stored-files li")
          .evaluateAll((rows) => rows.map((row) => row.getAttribute("data-path"))),
      ).toEqual([...stored.withSubagent.files.keys()]);
      expect(await page.locator(".tab").allTextContents()).toEqual(["main", `subagent (${SUBAGENT_ID})`]);
      const records = real.records(CLAUDE_MAIN);
      expect(await showAll()).toEqual(toolUseIds(records));
      // The human's prompt, as the file's first user record with text holds it.
      const prompt = records.find(
        (record) => record.type === "user" && typeof record.message.content === "string",
      );
      const firstPost = page.locator("section.stored-transcript article.entry-post").first();
      expect((await firstPost.locator(".body").textContent())?.trim()).toBe(prompt!.message.content.trim());
      // Thinking is there, collapsed.
      const thinking = page.locator("section.stored-transcript details.thinking").first();
      expect(await thinking.evaluate((element) => (element as unknown as DetailsElement).open)).toBe(false);
      await screenshot("stowage-stored-session.png");
    });

    it("opens the subagent's transcript from the Task call that started it", async () => {
      await page.locator("button.open-subagent", { hasText: SUBAGENT_ID }).click();
      await expect
        .poll(() => page.locator('.tab[aria-selected="true"]').textContent(), WAIT)
        .toBe(`subagent (${SUBAGENT_ID})`);
      expect(await showAll()).toEqual(toolUseIds(real.records(CLAUDE_SUBAGENT)));
    });

    it("downloads each file byte for byte as the agent wrote it", async () => {
      for (const [path, bytes] of stored.withSubagent.files) {
        const [download] = await Promise.all([
          page.waitForEvent("download"),
          page.locator(`.stored-files li[data-path="${path}"] button.download`).click(),
        ]);
        expect(download.suggestedFilename()).toBe(path.slice(path.lastIndexOf("/") + 1));
        expect(await readFile(await download.path())).toEqual(bytes);
      }
    });

    it("pages a 1.4 MB session, shows its images from their refs, and loads an item a page cut whole", async () => {
      await open(stored.large);
      const status = page.locator(".transcript-status", { hasText: "entries" });
      await status.waitFor();
      const first = (await status.textContent()) ?? "";
      const [shown, total] = (/^([\d,]+) of ([\d,]+) entries$/.exec(first) ?? []).slice(1);
      expect(Number(shown)).toBe(100);
      expect(Number(total?.replaceAll(",", ""))).toBeGreaterThan(100);
      const ids = await showAll();
      const records = stored.large.records;
      expect(ids).toEqual(toolUseIds(records));
      // Every Read result the file holds as a PNG is shown as that image.
      const pngs = records.filter((record) => record.toolUseResult?.type === "image").length;
      const images = page.locator("section.stored-transcript img.blob-image");
      expect(await images.count()).toBe(pngs);
      await images.first().scrollIntoViewIfNeeded();
      await expect
        .poll(() => images.first().evaluate((img) => (img as unknown as ImageElement).naturalWidth), WAIT)
        .toBe(320);
      // The longest tool result in the file is more than a page carries: its card loads it whole.
      const longest = records
        .filter((record) => typeof record.message?.content?.[0]?.content === "string")
        .sort((a, b) => b.message.content[0].content.length - a.message.content[0].content.length)[0]!;
      const card = page.locator(
        `article.tool[data-invocation-id="${longest.message.content[0].tool_use_id}"]`,
      );
      await card.locator("summary").click();
      expect(await card.locator("pre.tool-output").textContent()).toContain("…[truncated");
      await card.locator("button.load-full").click();
      await card.locator(".loaded-note").waitFor();
      expect(await card.locator("pre.tool-output").textContent()).not.toContain("…[truncated");
      await card.scrollIntoViewIfNeeded();
      await screenshot("stowage-stored-session-large.png");
    });

    it("reads a Codex rollout: each prompt the user typed, with the image pasted in it", async () => {
      await open(stored.codex);
      await showAll();
      const prompts = real
        .records(CODEX_ROLLOUT)
        .filter((record) => record.payload?.type === "user_message")
        .map((record) => record.payload.message as string);
      const posts: Locator = page.locator("section.stored-transcript article.entry-post");
      expect(await posts.count()).toBe(prompts.length);
      for (const [index, prompt] of prompts.entries()) {
        expect(await posts.nth(index).locator(".body").textContent()).toContain(prompt);
        const image = posts.nth(index).locator("img.blob-image");
        await expect
          .poll(() => image.evaluate((img) => (img as unknown as ImageElement).naturalHeight), WAIT)
          .toBe(200);
      }
      await screenshot("stowage-stored-session-codex.png");
    });

    it("raised no error in the page", () => {
      expect(pageErrors).toEqual([]);
    });
  },
);
