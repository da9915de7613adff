import {
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type OpenedDirectory, openDirectoryBeneath } from "../../src/fs/open-beneath.js";
import { expectStowageError } from "../../src/testing/expect-stowage-error.js";

// Core sits below @stowage/test-support, so it makes its own temp directory.
const base = await mkdtemp(join(tmpdir(), "stowage-beneath-"));
afterAll(() => rm(base, { recursive: true, force: true }));
let count = 0;

/** A fresh root with `outside/secret` beside it, where anything that escaped would land. */
function setup() {
  const dir = join(base, String(count++));
  const root = join(dir, "root");
  const outside = join(dir, "outside");
  mkdirSync(root, { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, "secret"), "outside");
  return { dir, root, outside };
}

function outsideUnchanged(outside: string): void {
  expect(readdirSync(outside)).toEqual(["secret"]);
}

/** Runs `use` with what the call returns, closing it after. */
function using<T>(opened: OpenedDirectory | null, use: (directory: OpenedDirectory) => T): T {
  if (!opened) throw new Error("expected a directory");
  try {
    return use(opened);
  } finally {
    opened.close();
  }
}

const refusedCall = (call: () => unknown) => expectStowageError(call, "FORBIDDEN");

describe("openDirectoryBeneath", () => {
  it("opens and creates nested directories; files written through `path` land inside", () => {
    const { root } = setup();
    expect(openDirectoryBeneath(root, ["a", "b"])).toBeNull();
    const created: string[] = [];
    using(
      openDirectoryBeneath(root, ["a", "b"], { create: true, onCreate: (p) => created.push(p) }),
      (dir) => {
        expect(dir.lexicalPath).toBe(join(root, "a", "b"));
        writeFileSync(`${dir.path}/file`, "inside");
      },
    );
    expect(created).toEqual([join(root, "a"), join(root, "a", "b")]);
    expect(readFileSync(join(root, "a", "b", "file"), "utf8")).toBe("inside");
    using(openDirectoryBeneath(root, []), (dir) => expect(readdirSync(dir.path)).toEqual(["a"]));
  });

  it("creates a missing root with its parents and reports the topmost one made", () => {
    const { dir } = setup();
    const created: string[] = [];
    const root = join(dir, "x", "y");
    expect(openDirectoryBeneath(root, ["z"])).toBeNull();
    using(openDirectoryBeneath(root, ["z"], { create: true, onCreate: (p) => created.push(p) }), () => {});
    expect(created).toEqual([join(dir, "x"), join(root, "z")]);
  });

  it("follows a link at the root itself: the caller chose it", () => {
    const { dir, outside } = setup();
    const link = join(dir, "root-link");
    symlinkSync(outside, link);
    using(openDirectoryBeneath(link, []), (opened) => expect(readdirSync(opened.path)).toEqual(["secret"]));
  });

  // Hostile rows: where a link is planted below the root, and the segments every call walks.
  const PLANTED: ReadonlyArray<[string, string, string[]]> = [
    ["as the first segment", "sub", ["sub"]],
    ["deeper down", "a/b", ["a", "b", "c"]],
    ["above a missing directory", "sub", ["sub", "new", "deeper"]],
  ];

  it.each(PLANTED)(
    "refuses a link %s, with and without create, and nothing outside changes",
    async (_, at, segments) => {
      const { root, outside } = setup();
      mkdirSync(join(root, at, ".."), { recursive: true });
      symlinkSync(outside, join(root, at));
      for (const create of [false, true]) {
        const error = await refusedCall(() => openDirectoryBeneath(root, segments, { create }));
        expect(error.reason).toBe("SYMLINK_REFUSED");
        expect(error.details).toEqual({ path: join(root, at) });
      }
      const custom = await refusedCall(() => openDirectoryBeneath(root, segments, { refusedReason: "MINE" }));
      expect(custom.reason).toBe("MINE");
      outsideUnchanged(outside);
    },
  );

  it("refuses a link to a file too, and a dangling link", async () => {
    const { root, outside } = setup();
    symlinkSync(join(outside, "secret"), join(root, "file-link"));
    symlinkSync(join(outside, "missing"), join(root, "dangling"));
    await refusedCall(() => openDirectoryBeneath(root, ["file-link"]));
    await refusedCall(() => openDirectoryBeneath(root, ["dangling"], { create: true }));
    outsideUnchanged(outside);
  });

  it("a file in the way is CONFLICT (NOT_A_DIRECTORY), or FORBIDDEN with refuseNonDirectories", async () => {
    const { root } = setup();
    writeFileSync(join(root, "plain"), "x");
    for (const create of [false, true]) {
      await expectStowageError(
        () => openDirectoryBeneath(root, ["plain", "x"], { create }),
        "CONFLICT",
        "NOT_A_DIRECTORY",
      );
    }
    await refusedCall(() => openDirectoryBeneath(root, ["plain"], { refuseNonDirectories: true }));
    // A root that is a file, with and without segments below it.
    for (const [segments, create] of [
      [[], false],
      [["x"], false],
      [["x"], true],
    ] as const) {
      const error = await expectStowageError(
        () => openDirectoryBeneath(join(root, "plain"), segments, { create }),
        "CONFLICT",
        "NOT_A_DIRECTORY",
      );
      expect(error.details).toEqual({ path: join(root, "plain") });
    }
  });

  const HOSTILE_SEGMENTS: ReadonlyArray<[string, string[]]> = [
    ["..", [".."]],
    ["a later ..", ["a", "..", ".."]],
    [".", ["."]],
    ["an empty segment", [""]],
    ["an absolute segment", ["/etc"]],
    ["a segment with a slash", ["a/../../x"]],
    ["NUL", ["a\0b"]],
    ["not a string", [42 as unknown as string]],
  ];

  it.each(HOSTILE_SEGMENTS)("refuses %s as a segment before touching the disk", async (_, segments) => {
    const { root } = setup();
    await expectStowageError(() => openDirectoryBeneath(root, segments, { create: true }), "INVALID_INPUT");
    expect(readdirSync(root)).toEqual([]);
  });

  it("a directory swapped for a link after it was opened: what is written through `path` stays inside", () => {
    const { root, outside } = setup();
    using(openDirectoryBeneath(root, ["sub"], { create: true }), (dir) => {
      // The attacker's move: the real directory goes away, a link to outside takes its name.
      renameSync(join(root, "sub"), join(root, "sub-real"));
      symlinkSync(outside, join(root, "sub"));
      writeFileSync(`${dir.path}/written`, "inside");
    });
    outsideUnchanged(outside);
    expect(readFileSync(join(root, "sub-real", "written"), "utf8")).toBe("inside");
  });

  it("a segment swapped for a link mid-walk (injected between the mkdir and the open) is refused", async () => {
    const { root, outside } = setup();
    const error = await refusedCall(() =>
      openDirectoryBeneath(root, ["a", "b"], {
        create: true,
        onCreate: (made) => {
          if (made !== join(root, "a")) return;
          rmSync(made, { recursive: true });
          symlinkSync(outside, made);
        },
      }),
    );
    expect(error.details).toEqual({ path: join(root, "a") });
    outsideUnchanged(outside);
  });

  it("walks on from a directory already open, whose own path was swapped since", async () => {
    const { root, outside } = setup();
    mkdirSync(join(root, "held", "child"), { recursive: true });
    const parent = openDirectoryBeneath(root, ["held"])!;
    try {
      renameSync(join(root, "held"), join(root, "held-real"));
      symlinkSync(outside, join(root, "held"));
      using(openDirectoryBeneath(parent, ["child"]), (child) => writeFileSync(`${child.path}/x`, "in"));
      expect(readFileSync(join(root, "held-real", "child", "x"), "utf8")).toBe("in");
      // With no segment the caller's directory comes back; closing that copy leaves the original open.
      openDirectoryBeneath(parent, [])!.close();
      expect(readdirSync(parent.path).sort()).toEqual(["child"]);
      // A link planted inside the held directory is refused like any other.
      symlinkSync(outside, join(root, "held-real", "link"));
      await refusedCall(() => openDirectoryBeneath(parent, ["link"]));
    } finally {
      parent.close();
    }
    outsideUnchanged(outside);
  });
});
