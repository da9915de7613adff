import { existsSync } from "node:fs";
import { inCi } from "@stowage/test-support";
import { type Browser, chromium } from "playwright-core";

/** Debian's Chromium (`apt-get install chromium`), which CI installs; `STOWAGE_CHROMIUM` points elsewhere. */
export const CHROMIUM_PATH = process.env.STOWAGE_CHROMIUM || "/usr/bin/chromium";

/** Headless flags for a container: no sandbox (no user namespaces), no GPU, nothing phoning home. */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export type ChromiumAvailability = { ready: true } | { ready: false; reason: string };

/**
 * Whether the browser test can run: outside CI a missing Chromium skips it with a printed reason;
 * with `CI` set it throws, because CI must install Chromium.
 */
export function chromiumAvailability(): ChromiumAvailability {
  if (existsSync(CHROMIUM_PATH)) return { ready: true };
  if (inCi) {
    throw new Error(
      `browser test: no Chromium at ${CHROMIUM_PATH}; CI must install it (apt-get install chromium) instead of skipping`,
    );
  }
  const reason = `browser test skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set STOWAGE_CHROMIUM)`;
  console.warn(`[stowage] ${reason}`);
  return { ready: false, reason };
}

/** Launches the system Chromium headless. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
}
