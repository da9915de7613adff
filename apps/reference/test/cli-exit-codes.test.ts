import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnStowage } from "./support/cli.js";

// The README's rule, checked through the published bin as a user meets it: 2 when the command
// line is wrong (commander's refusals and the commands' own checks of it), 1 when the operation
// was refused or failed; in both cases stderr names the problem.

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "stowage-exit-codes-"));
  await writeFile(join(dir, "notes.txt"), "a file to upload\n");
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const NO_BLOB = "0".repeat(64);

/** argv → exit status → what stderr must say. */
const WRONG_COMMAND_LINES: [argv: string[], status: number, says: string][] = [
  [["nope"], 2, "unknown command 'nope'"],
  [["serve", "--nope"], 2, "unknown option '--nope'"],
  [["demo", "--nope"], 2, "unknown option '--nope'"],
  [["blob", "put"], 2, "missing required argument 'file'"],
  [["blob", "get"], 2, "missing required argument 'hash-or-ref'"],
  [["blob", "verify", "--nope"], 2, "unknown option '--nope'"],
  [["blob", "gc", "--grace-hours", "-1"], 2, "--grace-hours must be a non-negative number, got -1"],
  [["session", "register", "s1"], 2, "give --user <id> or --org <id>"],
  [["session", "register", "--user", "u"], 2, "missing required argument 'session-id'"],
  [["session", "list"], 2, "give --user <id> or --org <id>"],
  [["session", "list", "--user", "a", "--org", "b"], 2, "not both"],
  [["session", "list", "--user", "../x"], 2, "--user"],
  [["session", "stored"], 2, "give --user <id> or --org <id>"],
  [["session", "capture", "--session", "s1", "--user", "u"], 2, "required option '--request <id>'"],
  [
    ["session", "capture", "--session", "s1", "--request", "r", "--user", "u", "--agent", "aider"],
    2,
    "aider",
  ],
  [["session", "capture", "--session", "s1", "--request", "r"], 2, "give --user <id> or --org <id>"],
  [["session", "restore", "--user", "u"], 2, "required option '--request <id>'"],
  [["session", "restore", "--request", "r"], 2, "give --user <id> or --org <id>"],
  [["session", "local", "extra"], 2, "too many arguments"],
  [["artifact", "read"], 2, "missing required argument 'url'"],
  [["artifact", "read", "artifact://0"], 2, "give --session <id> (with --user or --org) or --dir"],
  [["artifact", "read", "artifact://0", "--dir", ".", "--user", "u"], 2, "drop --user/--org"],
  [
    ["artifact", "read", "artifact://0", "--dir", ".", "--offset", "x"],
    2,
    "--offset must be a non-negative integer, got x",
  ],
  [["upload", "--session", "s1"], 2, "missing required argument 'file'"],
  [["upload", "notes.txt"], 2, "required option '--session <id>'"],
  [["uploads", "sweep"], 2, "required option '--older-than-days <days>'"],
  [["uploads", "sweep", "--older-than-days", "x"], 2, "--older-than-days must be a positive number, got x"],
  [["keys", "create"], 2, "give --user <id> or --org <id>"],
  [["keys", "create", "--org", "a/b"], 2, "--org"],
  [["mcp", "--user", "u"], 2, "required option '--session <id>'"],
  [["mcp", "--session", "s1"], 2, "give --user <id> or --org <id>"],
  // The command line is right; the operation is refused or fails.
  [["blob", "get", NO_BLOB], 1, `no blob ${NO_BLOB}`],
  [["session", "restore", "--request", "r", "--user", "u"], 1, "no live session stored for request r"],
  [["artifact", "read", "artifact://0", "--session", "s1", "--user", "u"], 1, "s1"],
  [["upload", "notes.txt", "--session", "s1"], 1, "API key"],
];

/** Runs `work` over `items`, at most `limit` at a time (each is a process on a small machine). */
async function pooled<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: limit }, lane));
  return results;
}

describe("stowage exit statuses", () => {
  it("exits 2 for a wrong command line and 1 for a refused operation, naming the problem", async () => {
    const runs = await pooled(WRONG_COMMAND_LINES, 3, async ([argv]) =>
      spawnStowage(argv, { cwd: dir, env: {} }),
    );
    const seen = runs.map((run, index) => {
      const [argv, , says] = WRONG_COMMAND_LINES[index]!;
      return { argv, status: run.code, names: run.stderr.includes(says) ? says : run.stderr };
    });
    expect(seen).toEqual(WRONG_COMMAND_LINES.map(([argv, status, says]) => ({ argv, status, names: says })));
    // A refused read of this directory created nothing in it.
    expect((await readdir(dir)).sort()).toEqual(["notes.txt"]);
  }, 240_000);

  it("prints a wrong command line in the wire format with --json, and still exits 2", async () => {
    const run = await spawnStowage(["keys", "create", "--json"], { cwd: dir, env: {} });
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stderr)).toMatchObject({ code: "INVALID_INPUT" });
    expect(run.stdout).toBe("");
  }, 60_000);
});
