// The web viewer in a real browser: Debian's Chromium driven by playwright-core, against the app
// serving a freshly played demo. Each step follows from the previous one on the same page.
import { textItem, toolCallItem, toolResultItem } from "@stowage/thread-items";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DemoResult, runDemo } from "../src/demo/run-demo.js";
import { demoScreenshot } from "../src/demo/screenshot.js";
import { chromiumAvailability, launchChromium } from "./browser/chromium.js";
import { startTestApp, type TestApp } from "./support/test-app.js";

/** Where the test leaves its screenshots, to look at the page. */
const SCREENSHOT_DIR = process.env.STOWAGE_SCREENSHOT_DIR || "/tmp";
// A line from the middle of the demo's 2 MB output: cut from the thread item, kept in the log.
const MIDDLE_LINE = "case 012345 parses nested expressions";
const LAST_LINE = "Tests: 1 failed, 24,994 passed";
/** How long a step waits for the page (Playwright's own waits use the same bound). */
const WAIT = { timeout: 10_000 };

// The test typechecks without the DOM library: these are the few browser shapes its page functions use.
type DetailsElement = { open: boolean };
type ImageElement = { naturalWidth: number; naturalHeight: number };
declare const sessionStorage: { getItem(key: string): string | null };

const browserReady = chromiumAvailability();

describe.skipIf(!browserReady.ready)("web viewer in Chromium", () => {
  let app: TestApp;
  let demo: DemoResult;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];
  const cspViolations: string[] = [];

  const watch = (target: Page) => {
    target.on("pageerror", (err) => pageErrors.push(err.message));
    target.on("console", (message) => {
      if (message.text().includes("Content Security Policy")) cspViolations.push(message.text());
    });
  };
  const threadPath = () => `/threads/${demo.agentSessionId}/main/items`;
  const post = async (item: unknown) => {
    const response = await app.call(threadPath(), { key: demo.apiKey, json: item });
    expect(response.status).toBe(201);
  };
  const entry = (text: string): Locator => page.locator("article.entry", { hasText: text });

  beforeAll(async () => {
    app = await startTestApp();
    demo = await runDemo(app.server, () => {});
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
    context.setDefaultTimeout(WAIT.timeout);
    page = await context.newPage();
    watch(page);
    await page.goto(demo.viewerUrl);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it("takes the key out of the address bar into this tab's storage and lists the session", async () => {
    await page.locator(`a[href="#session=${demo.agentSessionId}"]`).waitFor();
    expect(page.url()).toBe(`${app.url}/#session=${demo.agentSessionId}`);
    expect(page.url()).not.toContain(demo.apiKey);
    expect(await page.evaluate(() => sessionStorage.getItem("stowage.viewer.key"))).toBe(demo.apiKey);
    expect(await page.locator("nav a.active").getAttribute("href")).toBe(`#session=${demo.agentSessionId}`);
  });

  it("shows the session's thread: the user's brief, the agent's text, the tool pairs folded", async () => {
    await entry("The parser rejects trailing commas in argument lists").waitFor();
    const bash = entry("npm test");
    await expect.poll(() => bash.locator(".tool-name").textContent(), WAIT).toBe("Bash");
    expect(await bash.locator(".badge").textContent()).toBe("error");
    // The call and its result are one card: the result's brief is in it, not on its own.
    expect(await bash.locator(".tool-result-brief").textContent()).toContain("(24997 lines)");
    expect(await page.locator("article.tool").count()).toBe(3);
    await entry("The full output is artifact://0").waitFor();
    await entry("Turn complete").waitFor();
  });

  it("keeps thinking collapsed until it is opened", async () => {
    const thinking = page.locator("details.thinking");
    expect(await thinking.evaluate((element) => (element as unknown as DetailsElement).open)).toBe(false);
    expect(await thinking.locator(".thinking-text").isVisible()).toBe(false);
    await thinking.locator("summary").click();
    expect(await thinking.locator(".thinking-text").textContent()).toContain("run the test suite first");
  });

  it("expands the truncated 2 MB tool result with the full output from the thread log", async () => {
    const bash = entry("npm test");
    await bash.locator("summary").click();
    const output = bash.locator("pre.tool-output");
    const truncated = (await output.textContent()) ?? "";
    expect(truncated).toMatch(/…\[truncated \d+ bytes; see [^\]]+\]…/);
    expect(truncated).not.toContain(MIDDLE_LINE);
    await bash.getByRole("button", { name: "Load full output" }).click();
    await expect
      .poll(async () => (await output.textContent())?.includes(MIDDLE_LINE), { timeout: 20_000 })
      .toBe(true);
    const full = (await output.textContent()) ?? "";
    expect(full).toContain(LAST_LINE);
    expect(full).not.toContain("…[truncated");
    expect(full.split("\n")).toHaveLength(24_998);
    await page.screenshot({ path: `${SCREENSHOT_DIR}/stowage-viewer-full-output.png` });
  });

  it("renders the screenshot from the blob store as an image, fetched with the key", async () => {
    const image = entry("browser_screenshot").locator("img.blob-image");
    await expect
      .poll(() => image.evaluate((img) => (img as unknown as ImageElement).naturalWidth), WAIT)
      .toBe(320);
    expect(await image.evaluate((img) => (img as unknown as ImageElement).naturalHeight)).toBe(200);
    const src = (await image.getAttribute("src")) ?? "";
    expect(src).toMatch(/^blob:/);
    expect(src).not.toContain(demo.apiKey);
  });

  it("lists the upload with a download link to its signed URL", async () => {
    const row = page.locator(".uploads tr", { hasText: "failing-page.png" });
    await row.waitFor();
    expect(await row.locator(".size").textContent()).toBe("6.7 KB");
    const [popup] = await Promise.all([
      context.waitForEvent("page"),
      row.getByRole("link", { name: "Download" }).click(),
    ]);
    const url = popup.url();
    await popup.close();
    expect(url.startsWith(`${app.url}/direct/`)).toBe(true);
    expect(url).not.toContain(demo.apiKey);
    const downloaded = new Uint8Array(await (await fetch(url)).arrayBuffer());
    expect(Buffer.from(downloaded).equals(demoScreenshot())).toBe(true);
  });

  it("opens artifact://0 from the agent's text and pages to the output's last line", async () => {
    await entry("The full output is artifact://0").locator("a.ref", { hasText: "artifact://0" }).click();
    const reader = page.locator("dialog#reader");
    await expect.poll(() => reader.locator(".range").textContent(), WAIT).toBe("lines 1–200");
    expect(await reader.locator("#reader-text").textContent()).toContain("case 000000");
    await reader.getByRole("button", { name: "Last »" }).click();
    await expect.poll(() => reader.locator(".range").textContent(), WAIT).toBe("lines 24798–24997 of 24997");
    const text = (await reader.locator("#reader-text").textContent()) ?? "";
    expect(text.trimEnd().split("\n").at(-1)).toBe(LAST_LINE);
    await page.screenshot({ path: `${SCREENSHOT_DIR}/stowage-viewer-artifact.png` });
    await reader.getByRole("button", { name: "Close" }).click();
    expect(await reader.isVisible()).toBe(false);
  });

  it("opens the subagent's output through agent://", async () => {
    await entry("Explore the parser").locator(".tool-result-brief a.ref").click();
    const reader = page.locator("dialog#reader");
    await expect.poll(() => reader.locator("#reader-text").textContent(), WAIT).toContain("parseArguments()");
    expect(await reader.locator("#reader-title").textContent()).toBe("agent://0-Explore");
    await reader.getByRole("button", { name: "Close" }).click();
  });

  it("appends items posted while the page is open, and folds a live result into its call", async () => {
    await page.locator(".live-live").waitFor();
    await post(textItem("Live: the fix goes in parseArguments(), see agent://0-Explore."));
    const live = entry("Live: the fix goes in parseArguments()");
    await live.waitFor();
    // Sentence punctuation stays out of the link.
    expect(await live.locator("a.ref").textContent()).toBe("agent://0-Explore");
    await post(
      toolCallItem({ name: "Edit", invocationId: "call-live", input: { file_path: "src/parser.ts" } }),
    );
    const card = page.locator('article.tool[data-invocation-id="call-live"]');
    await expect.poll(() => card.locator(".badge").textContent(), WAIT).toBe("running");
    await post(toolResultItem({ invocationId: "call-live", output: "patched parseArguments()" }));
    await expect.poll(() => card.locator(".badge").textContent(), WAIT).toBe("ok");
    expect(await card.count()).toBe(1);
  });

  it("shows hostile text as text, never as markup", async () => {
    const hostile = `<img src=x onerror="document.title='pwned'"><script>document.title='pwned'</script>`;
    await post(textItem(hostile));
    await expect.poll(() => entry("<img src=x").locator(".body").textContent(), WAIT).toBe(hostile);
    expect(await page.locator('.entries img[src="x"], .entries script').count()).toBe(0);
    expect(await page.title()).toBe("Stowage viewer");
  });

  it("shows every alias of the session's job as a tab", async () => {
    const response = await app.call(`/threads/${demo.agentSessionId}/review/items`, {
      key: demo.apiKey,
      json: textItem("A second opinion on the parser fix."),
    });
    expect(response.status).toBe(201);
    await page.reload();
    const tabs = page.getByRole("tab");
    await expect.poll(() => tabs.allTextContents(), WAIT).toEqual(["main", "review"]);
    expect(await tabs.first().getAttribute("aria-selected")).toBe("true");
    await tabs.nth(1).click();
    await entry("A second opinion on the parser fix.").waitFor();
    expect(await page.locator(".thread").getAttribute("data-thread")).toBe(`${demo.agentSessionId}/review`);
  });

  it("shows the server's error for a session that does not exist", async () => {
    await page.goto(`${app.url}/#session=no-such-session`);
    await expect
      .poll(() => page.locator(".inline-error").first().textContent(), WAIT)
      .toMatch(/^NOT_FOUND: /);
  });

  it("asks for a key when it has none, and refuses a wrong one with the server's message", async () => {
    const fresh = await context.newPage();
    watch(fresh);
    await fresh.goto(`${app.url}/`);
    await fresh.locator("#key-form").waitFor();
    await fresh.fill("#key-input", "stw_not-a-real-key");
    await fresh.click("#key-form button[type=submit]");
    await expect.poll(() => fresh.locator("#notice").textContent(), WAIT).toContain("UNAUTHORIZED");
    await fresh.fill("#key-input", demo.apiKey);
    await fresh.click("#key-form button[type=submit]");
    await fresh.locator(`a[href="#session=${demo.agentSessionId}"]`).waitFor();
    await fresh.close();
  });

  it("ran without script errors or content-security-policy violations", async () => {
    await page.goto(`${app.url}/#session=${demo.agentSessionId}`);
    await entry("Live: the fix goes in parseArguments()").waitFor();
    await page.screenshot({ path: `${SCREENSHOT_DIR}/stowage-viewer.png`, fullPage: true });
    expect(pageErrors).toEqual([]);
    expect(cspViolations).toEqual([]);
  });
});
