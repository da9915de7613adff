import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnStowage } from "./support/cli.js";

// Issue 33 item 5: `session restore` run from another directory created an empty embedded
// database there and said only "no live session stored". A read creates nothing, and a read that
// finds nothing names the data directory it looked in.

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "stowage-reads-"));
});
afterAll(() => rm(root, { recursive: true, force: true }));

/** argv of a read → exit status → what it says, with `<data>` for the data directory it looked in. */
const READS: [argv: string[], status: number, says: string][] = [
  [
    ["session", "restore", "--request", "req-1", "--user", "u"],
    1,
    "no live session stored for request req-1 of user u in the data directory <data>",
  ],
  [["session", "stored", "--user", "u"], 0, "no sessions stored for user u in the data directory <data>"],
  [
    ["session", "list", "--org", "acme"],
    0,
    "no sessions registered for org acme in the data directory <data>",
  ],
  [["blob", "get", "f".repeat(64)], 1, `no blob ${"f".repeat(64)} in the data directory <data>`],
  [["blob", "verify"], 0, ""],
  [
    ["artifact", "read", "agent://0", "--session", "s1", "--user", "u"],
    1,
    "no session s1 in the data directory <data>",
  ],
];

describe("a read in a directory with no data", () => {
  it.each(READS)(
    "stowage %j exits %i, says why and creates nothing",
    async (argv, status, says) => {
      const cwd = await mkdtemp(join(root, "empty-"));
      const run = await spawnStowage(argv, { cwd, env: {} });
      expect({ status: run.code, stderr: run.stderr }).toMatchObject({
        status,
        stderr: expect.stringContaining(says.replace("<data>", join(cwd, ".stowage"))),
      });
      expect(await readdir(cwd)).toEqual([]);
    },
    60_000,
  );
});
