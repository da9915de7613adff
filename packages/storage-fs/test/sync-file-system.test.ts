import { runChild, tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";

// The checkpoint's syncfs: `sync -f` run by one long-lived shell per process, not by a fork of
// this process per checkpoint (a fork blocks the event loop in proportion to the process's memory).

const onLinux = process.platform === "linux";
const base = await tempDirectory("stowage-fs-syncfs-");

interface HelperProcess {
  pid: number;
  command: string;
}

/** What the child saw (children/sync-file-system-helpers.ts): run once, read by two tests. */
interface Observed {
  before: HelperProcess[];
  first: boolean;
  afterFirst: HelperProcess[];
  concurrent: boolean[];
  afterConcurrent: HelperProcess[];
  afterKill: boolean[];
  replaced: HelperProcess[];
  killedInFlight: boolean;
  refused: boolean[];
}

let observed: Promise<Observed> | undefined;
function observe(): Promise<Observed> {
  // In a process of its own: there, no other copy of the module starts helpers meanwhile.
  observed ??= runChild(new URL("./children/sync-file-system-helpers.ts", import.meta.url), [base]).then(
    (child) => {
      expect(child.code).toBe(0);
      return JSON.parse(child.stdout);
    },
  );
  return observed;
}

describe.skipIf(!onLinux)("syncFileSystem", () => {
  it("syncs through one helper shell, started once, kept for later calls, replaced once killed", async () => {
    const seen = await observe();
    expect(seen.before).toEqual([]);
    expect(seen.first).toBe(true);
    expect(seen.afterFirst).toHaveLength(1);
    expect(seen.afterFirst[0]!.command).toMatch(/^\/bin\/sh -c .* \/(usr\/)?bin\/sync$/);
    expect(seen.concurrent).toEqual([true, true, true]);
    expect(seen.afterConcurrent).toEqual(seen.afterFirst);
    expect(seen.afterKill.at(-1)).toBe(true);
    expect(seen.replaced).toHaveLength(1);
    expect(seen.replaced[0]!.pid).not.toBe(seen.afterFirst[0]!.pid);
    expect(seen.killedInFlight).toBe(false);
  });

  it("an awaited sync keeps its process alive; the idle helper does not (the process exits)", async () => {
    const child = await runChild(new URL("./children/sync-file-system-once.ts", import.meta.url), [base]);
    expect(child).toMatchObject({ code: 0, stdout: "true\n" });
  });

  it("where child processes are refused (Node's permission model), answers false: the caller fsyncs each file", async () => {
    const child = await runChild(new URL("./children/sync-file-system-once.ts", import.meta.url), [base], {
      env: { ...process.env, NODE_OPTIONS: "--experimental-permission --allow-fs-read=* --allow-fs-write=*" },
    });
    expect(child).toMatchObject({ code: 0, stdout: "false\n" });
  });

  it("refuses what it cannot carry or sync, leaving the caller to fsync each file", async () => {
    // A newline or a relative path (`-f`): false, nothing else changes; a path `sync -f` refuses: false, and every later call.
    expect((await observe()).refused).toEqual([false, false, true, false, false]);
  });
});
