import { readFileSync } from "node:fs";

/** The committed file, beside this module in src/ and in dist/ (the build copies it). */
const SCREENSHOT = new URL("./assets/failing-page.png", import.meta.url);

let bytes: Buffer | undefined;

/**
 * A real PNG (320×200, RGB) that looks like a page with a red error banner: the demo's
 * "screenshot", large enough to be externalized to the blob store. A committed file, drawn once
 * with the repository's one PNG encoder (tooling/test-support), so the published demo carries no
 * encoder of its own. Each call returns a fresh copy.
 */
export function demoScreenshot(): Buffer {
  bytes ??= readFileSync(SCREENSHOT);
  return Buffer.from(bytes);
}
