// search_session through the SDK client: what cannot be read is skipped and said, one large output
// hides nothing else, lines and characters cut by the 1 MiB reads are found whole, and the
// footers say what was not searched.
import { execFileSync } from "node:child_process";
import { mkdir, rename, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createSessionFiles } from "@stowage/artifacts";
import { tempDirectory } from "@stowage/test-support";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_SEARCH_SCANNED_BYTES, MAX_SEARCH_SOURCE_BYTES } from "../src/tools/session-search.js";
import { connectedFixture, connectInMemory, SESSION_ID, textOf } from "./session-fixture.js";

const base = await tempDirectory("stowage-mcp-search-");
const secret = join(base, "secret.txt");
await writeFile(secret, "a needle in a SECRET file\n");
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

const MIB = 1024 * 1024;
let sessionCount = 0;

/** A session with nothing in it, and a client connected to its server. */
async function emptySession() {
  const sessions = createSessionFiles({ dir: join(base, `empty-${sessionCount++}`) });
  const session = await sessions.create(SESSION_ID);
  const connection = await connectInMemory({ session });
  closers.push(connection.close);
  return { session, ...connection };
}

interface SearchResult {
  matches: { uri: string; line?: number; item?: string; excerpt: string }[];
  complete: boolean;
  stopped?: "limit" | "budget";
  scannedBytes: number;
  partial?: { uri: string; scannedBytes: number; size: number; line: number }[];
  incomplete?: { uri: string; scannedBytes: number }[];
  skipped?: { uri: string; code: string; reason?: string }[];
}

async function search(
  client: Awaited<ReturnType<typeof emptySession>>["client"],
  args: Record<string, unknown>,
) {
  const result = await client.callTool({ name: "search_session", arguments: args });
  expect(result.isError, textOf(result)).toBeFalsy();
  return { text: textOf(result), ...(result.structuredContent as unknown as SearchResult) };
}

describe("sources that cannot be read", () => {
  it("a planted link and a FIFO are skipped and reported; matches elsewhere are found", async () => {
    const { client, session } = await connectedFixture(base, closers);
    // The fixture holds artifacts 0 and 1; these take ids 2, 3 and the agent output 2-Leak.
    const dir = session.artifacts.dir;
    await symlink(secret, join(dir, "2.bash.log"));
    execFileSync("mkfifo", [join(dir, "3.bash.log")]);
    await symlink(secret, join(dir, "2-Leak.md"));
    const result = await search(client, { text: "needle" });
    expect(result.matches.map((m) => [m.uri, m.line, typeof m.item])).toEqual([
      ["agent://0-Explore", 2, "undefined"],
      ["thread://main", undefined, "string"],
    ]);
    expect(result.skipped).toEqual([
      { uri: "artifact://2", code: "FORBIDDEN", reason: "NOT_A_REGULAR_FILE" },
      { uri: "artifact://3", code: "FORBIDDEN", reason: "NOT_A_REGULAR_FILE" },
      { uri: "agent://2-Leak", code: "FORBIDDEN", reason: "NOT_A_REGULAR_FILE" },
    ]);
    expect(result.complete).toBe(false);
    expect(result.stopped).toBeUndefined();
    expect(result.text).toContain(
      "[skipped artifact://2: it cannot be read, FORBIDDEN (NOT_A_REGULAR_FILE)]",
    );
    expect(result.text).toContain(
      "[skipped agent://2-Leak: it cannot be read, FORBIDDEN (NOT_A_REGULAR_FILE)]",
    );
    expect(result.text).not.toContain("SECRET");
  });
});

describe("a planted artifacts directory and a tool still running", () => {
  it("an artifacts directory swapped for a link is skipped as a whole and said; the thread is still searched", async () => {
    const { client, session } = await connectedFixture(base, closers);
    const dir = session.artifacts.dir;
    // The attacker's directory looks like an artifacts directory, with the secret as a log.
    const planted = join(base, `planted-${sessionCount++}`);
    await mkdir(planted);
    await symlink(secret, join(planted, "0.bash.log"));
    await writeFile(join(planted, "0-Explore.md"), "a needle in a SECRET file\n");
    await rename(dir, `${dir}.moved`);
    await symlink(planted, dir);
    const result = await search(client, { text: "needle" });
    expect(result.text).not.toContain("SECRET");
    expect(result.matches.map((m) => m.uri)).toEqual(["thread://main"]);
    expect(result.skipped?.map((s) => s.uri)).toEqual(["artifact://", "agent://"]);
    expect(result.complete).toBe(false);
    expect(result.text).toMatch(/\[skipped every artifact:\/\/: their listing cannot be read, [A-Z_]+/);
    expect(result.text).toMatch(/\[skipped every agent:\/\/: their listing cannot be read, [A-Z_]+/);
  });

  it("searches an artifact still being written as far as it is written, and says so", async () => {
    const { client, session } = await emptySession();
    await session.artifacts.saveArtifact("bash", "done\n");
    // `<id>.<tool>.log.partial` is an output its tool is still writing (the artifacts layout).
    await writeFile(join(session.artifacts.dir, "1.bash.log.partial"), "compiling\nthe needle so far\n");
    const result = await search(client, { text: "needle" });
    expect(result.matches).toEqual([{ uri: "artifact://1", line: 2, excerpt: "the needle so far" }]);
    expect(result.incomplete).toEqual([{ uri: "artifact://1", scannedBytes: 28 }]);
    expect(result.complete).toBe(false);
    expect(result.text).toContain(
      "[artifact://1 is still being written: searched the 28 bytes written so far]",
    );
  });
});

describe("one large output", () => {
  it("a 33 MiB log at id 0 hides no match in artifact 1 or an agent output; it is reported as read in part", async () => {
    const { client, session } = await emptySession();
    // 2,000 lines of 17 KiB and a newline: 34,818,000 bytes.
    const lineBytes = 17 * 1024 + 1;
    await session.artifacts.saveArtifact("bash", `${"y".repeat(lineBytes - 1)}\n`.repeat(2000));
    await session.artifacts.saveArtifact("bash", "the needle is here\n");
    await session.artifacts.writeAgentOutput("0-Explore", "another needle\n");
    const result = await search(client, { text: "needle" });
    expect(result.matches).toEqual([
      { uri: "artifact://1", line: 1, excerpt: "the needle is here" },
      { uri: "agent://0-Explore", line: 1, excerpt: "another needle" },
    ]);
    // 8 MiB hold 481 whole lines; the scan stopped inside line 482.
    const stoppedIn = Math.floor(MAX_SEARCH_SOURCE_BYTES / lineBytes) + 1;
    expect(stoppedIn).toBe(482);
    expect(result.partial).toEqual([
      { uri: "artifact://0", scannedBytes: MAX_SEARCH_SOURCE_BYTES, size: 2000 * lineBytes, line: 482 },
    ]);
    expect(result.scannedBytes).toBe(MAX_SEARCH_SOURCE_BYTES + 19 + 15);
    expect(result.complete).toBe(false);
    expect(result.stopped).toBeUndefined();
    expect(result.text).toContain(
      `[artifact://0: searched only its first ${MAX_SEARCH_SOURCE_BYTES} of 34818000 bytes, up to line 482; read on with read_artifact with id "0" and offset=482]`,
    );
    expect(result.text).not.toContain("stopped after reading");
  });
});

describe("lines and characters cut by the reads", () => {
  it("finds a match in a line split across two 1 MiB reads, with its line number and excerpt", async () => {
    const { client, session } = await emptySession();
    const first = `${"x".repeat(100)}\n`; // bytes 0–100
    // Line 2 starts at byte 101; NEEDLE starts 3 bytes before the first read ends (byte 1 MiB).
    const second = `${"b".repeat(MIB - 101 - 3)}NEEDLE\n`;
    await session.artifacts.saveArtifact("bash", `${first}${second}tail\n`);
    const result = await search(client, { text: "needle" });
    expect(result.matches).toEqual([{ uri: "artifact://0", line: 2, excerpt: `…${"b".repeat(97)}NEEDLE` }]);
    expect(result.complete).toBe(true);
  });

  it("decodes a character whose bytes are cut by a read's end", async () => {
    const { client, session } = await emptySession();
    // € is E2 82 AC: put E2 at the last byte of the first 1 MiB read.
    const before = "c".repeat(MIB - 2);
    await session.artifacts.saveArtifact("bash", `line one\n${before.slice(9)}x€y and more\nlast\n`);
    const result = await search(client, { text: "X€Y" });
    expect(result.matches).toEqual([
      { uri: "artifact://0", line: 2, excerpt: `…${"c".repeat(98)}x€y and more` },
    ]);
    expect(result.complete).toBe(true);
  });

  it("finds text across the cut of a line too long to hold, once per line", async () => {
    const { client, session } = await emptySession();
    // Line 1 holds 3 MiB; NEEDLE straddles its first 1 MiB of characters, and comes again later.
    const long = `${"z".repeat(MIB - 2)}NEEDLE${"z".repeat(2 * MIB)}needle again\n`;
    await session.artifacts.saveArtifact("bash", `${long}needle on line 2\n`);
    const result = await search(client, { text: "needle" });
    // The piece that holds NEEDLE starts 3 characters before it (the overlap of a 6-character text is 5).
    expect(result.matches).toEqual([
      { uri: "artifact://0", line: 1, excerpt: `…zzzNEEDLE${"z".repeat(191)}…` },
      { uri: "artifact://0", line: 2, excerpt: "needle on line 2" },
    ]);
  });

  it("searches 2,000,000 empty lines and finds the match on the last line", async () => {
    const { client, session } = await emptySession();
    await session.artifacts.saveArtifact("bash", `${"\n".repeat(2_000_000)}the needle at the end\n`);
    const result = await search(client, { text: "needle" });
    expect(result.matches).toEqual([
      { uri: "artifact://0", line: 2_000_001, excerpt: "the needle at the end" },
    ]);
    expect(result.complete).toBe(true);
    expect(result.scannedBytes).toBe(2_000_000 + 22);
  });

  it("matches artifact lines as the model reads them: escape sequences gone, CRLF a line end", async () => {
    const { client, session } = await emptySession();
    await session.artifacts.saveArtifact("bash", "first\r\n\u001b[31mnee\u001b[0mdle in red\r\nlast\r\n");
    const result = await search(client, { text: "needle" });
    expect(result.matches).toEqual([{ uri: "artifact://0", line: 2, excerpt: "needle in red" }]);
  });
});

describe("footers", () => {
  it("says where it stopped at the limit", async () => {
    const { client, session } = await emptySession();
    await session.artifacts.saveArtifact("bash", "needle\n".repeat(10));
    const result = await search(client, { text: "needle", limit: 3 });
    expect(result.matches.map((m) => m.line)).toEqual([1, 2, 3]);
    expect(result).toMatchObject({ complete: false, stopped: "limit" });
    expect(result.text).toContain(
      "[stopped at 3 matches: search for longer text, or pass a larger limit (at most 100)]",
    );
  });

  it("stops after reading the budget, and says so with what it read", async () => {
    const { client, session } = await emptySession();
    // Four outputs of 9 MiB: 8 MiB of each is read, the whole budget; artifact 4 is not searched.
    const nineMib = `${"w".repeat(1023)}\n`.repeat(9 * 1024);
    for (let i = 0; i < 4; i++) await session.artifacts.saveArtifact("bash", nineMib);
    await session.artifacts.saveArtifact("bash", "needle\n");
    const result = await search(client, { text: "needle" });
    expect(result.matches).toEqual([]);
    expect(result.scannedBytes).toBe(MAX_SEARCH_SCANNED_BYTES);
    expect(result).toMatchObject({ complete: false, stopped: "budget" });
    expect(result.partial?.map((p) => [p.uri, p.scannedBytes, p.line])).toEqual(
      [0, 1, 2, 3].map((id) => [`artifact://${id}`, MAX_SEARCH_SOURCE_BYTES, 8 * 1024 + 1]),
    );
    expect(result.text).toContain(
      `[stopped after reading ${MAX_SEARCH_SCANNED_BYTES} bytes, the most one search reads`,
    );
  });

  it("reads a source that ends exactly at the budget without claiming it stopped", async () => {
    const { client, session } = await emptySession();
    const eightMib = `${"w".repeat(1023)}\n`.repeat(8 * 1024);
    for (let i = 0; i < 4; i++) await session.artifacts.saveArtifact("bash", eightMib);
    const result = await search(client, { text: "needle" });
    expect(result.scannedBytes).toBe(MAX_SEARCH_SCANNED_BYTES);
    expect(result).toMatchObject({ complete: true });
    expect(result.stopped).toBeUndefined();
    expect(result.partial).toBeUndefined();
    expect(result.text).toBe('no match for "needle"');
  });
});
