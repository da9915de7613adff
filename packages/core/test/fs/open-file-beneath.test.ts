import { execFileSync } from "node:child_process";
import {
  linkSync,
  mkdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { afterAll, describe, expect, it } from "vitest";
import { openDirectoryBeneath } from "../../src/fs/open-beneath.js";
import { type OpenedFile, openFileBeneath } from "../../src/fs/open-file-beneath.js";
import { expectStowageError } from "../../src/testing/expect-stowage-error.js";

// Core sits below @stowage/test-support, so it makes its own temp directory and its own swapper.
const base = await mkdtemp(join(tmpdir(), "stowage-file-beneath-"));
afterAll(() => rm(base, { recursive: true, force: true }));
let count = 0;

const INSIDE = "inside the root\n";
const OUTSIDE = "OUTSIDE: never read\n";

/** A root with `sub/notes.txt`, and `outside/notes.txt` beside it, where an escape would read. */
function setup() {
  const dir = join(base, String(count++));
  const root = join(dir, "root");
  const outside = join(dir, "outside");
  mkdirSync(join(root, "sub"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(root, "sub", "notes.txt"), INSIDE);
  writeFileSync(join(root, "top.txt"), INSIDE);
  writeFileSync(join(outside, "notes.txt"), OUTSIDE);
  return { dir, root, outside };
}

/** The whole file, read from the descriptor, which is then closed. */
async function textOf(opened: OpenedFile | null): Promise<string> {
  if (!opened) throw new Error("expected a file");
  try {
    return await readFile(opened.handle, "utf8");
  } finally {
    await opened.handle.close();
  }
}

const refused = (call: () => Promise<unknown>, reason: string) =>
  expectStowageError(call, "FORBIDDEN", reason);

describe("openFileBeneath", () => {
  it("opens a file at any depth and reports the descriptor's own stat", async () => {
    const { root } = setup();
    const opened = await openFileBeneath(root, ["sub", "notes.txt"]);
    expect(opened?.stats.isFile()).toBe(true);
    expect(opened?.stats.size).toBe(INSIDE.length);
    expect(opened?.lexicalPath).toBe(join(root, "sub", "notes.txt"));
    expect(await textOf(opened)).toBe(INSIDE);
    expect(await textOf(await openFileBeneath(root, ["top.txt"]))).toBe(INSIDE);
  });

  it("follows a link at the root itself (the caller chose it), and walks on from a held directory", async () => {
    const { dir, root } = setup();
    symlinkSync(root, join(dir, "root-link"));
    expect(await textOf(await openFileBeneath(join(dir, "root-link"), ["sub", "notes.txt"]))).toBe(INSIDE);
    const held = openDirectoryBeneath(root, ["sub"])!;
    try {
      expect(await textOf(await openFileBeneath(held, ["notes.txt"]))).toBe(INSIDE);
    } finally {
      held.close();
    }
  });

  it("gives null for a missing file, a missing directory, or a file where a directory should be", async () => {
    const { dir, root } = setup();
    expect(await openFileBeneath(root, ["nope.txt"])).toBeNull();
    expect(await openFileBeneath(root, ["nope", "notes.txt"])).toBeNull();
    expect(await openFileBeneath(root, ["top.txt", "notes.txt"])).toBeNull();
    expect(await openFileBeneath(join(dir, "no-root"), ["sub", "notes.txt"])).toBeNull();
    expect(await openFileBeneath(join(dir, "no-root"), ["notes.txt"])).toBeNull();
  });

  it("a root that is a file is CONFLICT (NOT_A_DIRECTORY), with or without directories below it", async () => {
    const { root } = setup();
    for (const segments of [["x"], ["x", "y"]]) {
      const error = await expectStowageError(
        () => openFileBeneath(join(root, "top.txt"), segments),
        "CONFLICT",
        "NOT_A_DIRECTORY",
      );
      expect(error.details).toEqual({ path: join(root, "top.txt") });
    }
  });

  // Hostile rows: what is planted below the root, where, and the reason it is refused with.
  const PLANTED: ReadonlyArray<[string, (root: string, outside: string) => void, string[], string]> = [
    [
      "a link to a file outside, as the file",
      (root, outside) => symlinkSync(join(outside, "notes.txt"), join(root, "link.txt")),
      ["link.txt"],
      "SYMLINK_REFUSED",
    ],
    [
      "a link to a directory outside, as a directory of the path",
      (root, outside) => symlinkSync(outside, join(root, "out")),
      ["out", "notes.txt"],
      "SYMLINK_REFUSED",
    ],
    [
      "a link that stays inside the root",
      (root) => symlinkSync(join(root, "sub"), join(root, "alias")),
      ["alias", "notes.txt"],
      "SYMLINK_REFUSED",
    ],
    [
      "a dangling link",
      (root, outside) => symlinkSync(join(outside, "missing"), join(root, "dangling")),
      ["dangling"],
      "SYMLINK_REFUSED",
    ],
    ["a directory", () => {}, ["sub"], "NOT_A_REGULAR_FILE"],
    [
      "a FIFO (opened without waiting for a writer)",
      (root) => execFileSync("mkfifo", [join(root, "pipe")]),
      ["pipe"],
      "NOT_A_REGULAR_FILE",
    ],
    [
      "a link to a device",
      (root) => symlinkSync("/dev/zero", join(root, "zero")),
      ["zero"],
      "SYMLINK_REFUSED",
    ],
  ];

  it.each(PLANTED)("refuses %s", async (_, plant, segments, reason) => {
    const { root, outside } = setup();
    plant(root, outside);
    const error = await refused(() => openFileBeneath(root, segments), reason);
    expect(JSON.stringify(error)).not.toContain(OUTSIDE);
  });

  it("refuses a device (only root can plant one; /dev stands in as the root here)", async () => {
    await refused(() => openFileBeneath("/dev", ["null"]), "NOT_A_REGULAR_FILE");
  });

  it("refuses a link with the caller's reason, and a hard link only when asked", async () => {
    const { root, outside } = setup();
    symlinkSync(outside, join(root, "out"));
    await refused(() => openFileBeneath(root, ["out", "notes.txt"], { refusedReason: "MINE" }), "MINE");
    linkSync(join(outside, "notes.txt"), join(root, "hard.txt"));
    await refused(() => openFileBeneath(root, ["hard.txt"], { refuseHardLinks: true }), "HARD_LINKED");
    // Without the option a file with two names is opened: its caller chose the root's trust.
    expect(await textOf(await openFileBeneath(root, ["hard.txt"]))).toBe(OUTSIDE);
  });

  const HOSTILE_SEGMENTS: ReadonlyArray<[string, unknown]> = [
    ["no segment", []],
    ["not an array", "sub/notes.txt"],
    ["..", ["..", "outside", "notes.txt"]],
    ["a later ..", ["sub", "..", "..", "outside", "notes.txt"]],
    [".", ["."]],
    ["an empty segment", ["sub", "", "notes.txt"]],
    ["an absolute segment", ["/etc/passwd"]],
    ["a segment with a slash", ["sub/../../outside/notes.txt"]],
    ["NUL", ["notes.txt\0"]],
    ["not a string", [42]],
  ];

  it.each(HOSTILE_SEGMENTS)("refuses %s as segments before touching the disk", async (_, segments) => {
    const { root } = setup();
    await expectStowageError(() => openFileBeneath(root, segments as string[]), "INVALID_INPUT");
  });

  it("reads the file of the directory it held when that directory is swapped for a link afterwards", async () => {
    const { root, outside } = setup();
    const held = openDirectoryBeneath(root, ["sub"])!;
    try {
      renameSync(join(root, "sub"), join(root, "sub-real"));
      symlinkSync(outside, join(root, "sub"));
      expect(await textOf(await openFileBeneath(held, ["notes.txt"]))).toBe(INSIDE);
      // From the root, the link now in its place is refused.
      await refused(() => openFileBeneath(root, ["sub", "notes.txt"]), "SYMLINK_REFUSED");
    } finally {
      held.close();
    }
    unlinkSync(join(root, "sub"));
    renameSync(join(root, "sub-real"), join(root, "sub"));
    expect(readFileSync(join(outside, "notes.txt"), "utf8")).toBe(OUTSIDE);
  });
});

/** Bounds of the race: this many opens, or this long, whichever ends first. */
const MAX_OPENS = 5_000;
const MAX_RACE_MS = 5_000;

/** The attacker, on a worker thread: `sub` steps aside, a link out takes its name, and back. */
const SWAP_LOOP = `
const { parentPort, workerData } = require("node:worker_threads");
const fs = require("node:fs");
const { directory, outside, flag } = workerData;
const stop = new Int32Array(flag);
fs.symlinkSync(outside, directory + ".link");
let swaps = 0;
while (Atomics.load(stop, 0) === 0) {
  fs.renameSync(directory, directory + ".real");
  fs.renameSync(directory + ".link", directory);
  fs.renameSync(directory, directory + ".link");
  fs.renameSync(directory + ".real", directory);
  swaps++;
}
parentPort.postMessage(swaps);
`;

describe("openFileBeneath racing a directory swapped for a link", () => {
  it("never opens the file outside, over thousands of opens", async () => {
    const { root, outside } = setup();
    const flag = new SharedArrayBuffer(4);
    const worker = new Worker(SWAP_LOOP, {
      eval: true,
      workerData: { directory: join(root, "sub"), outside, flag },
    });
    const swapped = new Promise<number>((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
    });
    const outcomes: Record<string, number> = {};
    let opens = 0;
    let swaps = 0;
    try {
      const until = Date.now() + MAX_RACE_MS;
      for (; opens < MAX_OPENS && Date.now() < until; opens++) {
        let outcome: string;
        try {
          const opened = await openFileBeneath(root, ["sub", "notes.txt"]);
          outcome = opened ? await textOf(opened) : "missing";
        } catch (err) {
          outcome = (err as { reason?: string }).reason ?? String(err);
        }
        outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      }
    } finally {
      Atomics.store(new Int32Array(flag), 0, 1);
      swaps = await swapped;
      await worker.terminate();
      console.info(`${opens} opens, ${swaps} swaps:`, outcomes);
    }
    expect(outcomes[OUTSIDE] ?? 0).toBe(0);
    // It raced: the swapper ran, and some walks met the link (else the test proves nothing).
    expect(swaps).toBeGreaterThan(0);
    expect(outcomes.SYMLINK_REFUSED ?? 0).toBeGreaterThan(0);
    // Only three things can happen: the workspace's file, the link refused, nothing there.
    expect(Object.keys(outcomes).every((k) => [INSIDE, "SYMLINK_REFUSED", "missing"].includes(k))).toBe(true);
    expect(outcomes[INSIDE] ?? 0).toBeGreaterThan(0);
  });
});
