// Byte-range reads (`readBytes`, `readArtifactBytes`, `readAgentOutputBytes`): the exact bytes on
// disk for ranges written out by hand, and one table of hostile inputs.
import { execFileSync } from "node:child_process";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createArtifactStore, createInternalUrlRouter } from "@stowage/artifacts";
import { expectStowageError } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { MAX_READ_BYTES_LIMIT } from "../src/read/read-options.js";
import { sessionFileIn } from "./helpers.js";

const base = await tempDirectory("stowage-artifacts-ranges-");
const secret = join(base, "secret.txt");
await writeFile(secret, "TOP SECRET\n");

const store = createArtifactStore({ sessionFile: sessionFileIn(base), logger: { warn: () => {} } });
// artifact://0: "ab€cd\n" — € (U+20AC) is the three bytes E2 82 AC, at positions 2–4.
await store.saveArtifact("bash", "ab€cd\n");
// artifact://1: empty.
await store.saveArtifact("bash", "");
// artifact://2: red text, escape sequences and all.
await store.saveArtifact("bash", "\u001b[31mred\u001b[0m\n");
// agent://0-Notes: "# Ü\n" — Ü (U+00DC) is C3 9C.
await store.writeAgentOutput("0-Notes", "# Ü\n");
const router = createInternalUrlRouter({ artifacts: store });

const bytesOf = (values: number[]) => new Uint8Array(values);

describe("the bytes of a range", () => {
  it.each([
    ["from the start", { start: 0, maxBytes: 2 }, [0x61, 0x62]],
    [
      "cutting € after its first byte (raw bytes, not decoded)",
      { start: 0, maxBytes: 3 },
      [0x61, 0x62, 0xe2],
    ],
    ["in the middle, the rest of €", { start: 3, maxBytes: 2 }, [0x82, 0xac]],
    ["to the end (fewer than asked)", { start: 5, maxBytes: 100 }, [0x63, 0x64, 0x0a]],
    ["the whole file by default", {}, [0x61, 0x62, 0xe2, 0x82, 0xac, 0x63, 0x64, 0x0a]],
    ["at the end: nothing", { start: 8 }, []],
  ] as [string, { start?: number; maxBytes?: number }, number[]][])(
    "artifact://0 %s",
    async (_, options, expected) => {
      const read = await router.readBytes("artifact://0", options);
      expect(read).toEqual({
        url: "artifact://0",
        scheme: "artifact",
        id: "0",
        bytes: bytesOf(expected),
        start: options.start ?? 0,
        size: 8,
        complete: true,
      });
    },
  );

  it("an empty file reads as no bytes from 0, and fails past it", async () => {
    expect(await router.readBytes("artifact://1")).toMatchObject({ bytes: bytesOf([]), start: 0, size: 0 });
    await expectStowageError(
      router.readBytes("artifact://1", { start: 1 }),
      "INVALID_INPUT",
      "OFFSET_PAST_END",
    );
  });

  it("returns what the tool wrote, escape sequences included (never sanitized)", async () => {
    const read = await router.readBytes("artifact://2", { start: 0, maxBytes: 5 });
    expect(read.bytes).toEqual(bytesOf([0x1b, 0x5b, 0x33, 0x31, 0x6d]));
  });

  it("reads agent://<id> the same way", async () => {
    expect(await router.readBytes("agent://0-Notes", { start: 2, maxBytes: 1 })).toEqual({
      url: "agent://0-Notes",
      scheme: "agent",
      id: "0-Notes",
      bytes: bytesOf([0xc3]),
      start: 2,
      size: 5,
      complete: true,
    });
    expect((await store.readAgentOutputBytes("0-Notes", { start: 3 })).bytes).toEqual(bytesOf([0x9c, 0x0a]));
  });

  it("a start past the end says where the end is", async () => {
    const err = await expectStowageError(
      router.readBytes("artifact://0", { start: 9 }),
      "INVALID_INPUT",
      "OFFSET_PAST_END",
    );
    expect(err.details).toEqual({ start: 9, size: 8 });
  });
});

describe("an artifact still being written", () => {
  it("is UNAVAILABLE without allowIncomplete; with it, reads up to its size when opened, then on", async () => {
    const running = createArtifactStore({ dir: join(base, "running") });
    const writer = await running.openArtifactWriter("bash");
    await writer.write(new TextEncoder().encode("first\n"));
    const url = `artifact://${writer.id}`;
    const runningRouter = createInternalUrlRouter({ artifacts: running });
    await expectStowageError(runningRouter.readBytes(url), "UNAVAILABLE", "ARTIFACT_INCOMPLETE");
    const first = await runningRouter.readBytes(url, { allowIncomplete: true });
    expect(first).toMatchObject({ bytes: new TextEncoder().encode("first\n"), size: 6, complete: false });
    await writer.write(new TextEncoder().encode("second\n"));
    const next = await running.readArtifactBytes(writer.id, { start: 6, allowIncomplete: true });
    expect(next).toMatchObject({
      bytes: new TextEncoder().encode("second\n"),
      start: 6,
      size: 13,
      complete: false,
    });
    await writer.publish();
    expect(await runningRouter.readBytes(url, { start: 13 })).toMatchObject({ size: 13, complete: true });
  });
});

describe("hostile inputs", () => {
  const planted = createArtifactStore({ sessionFile: sessionFileIn(base), logger: { warn: () => {} } });
  const plantedRouter = createInternalUrlRouter({ artifacts: planted });

  it.each([
    ["artifact://../x", "INVALID_ARTIFACT_ID"],
    ["artifact://1/../../etc", "INVALID_ARTIFACT_ID"],
    ["artifact://%2e%2e", "INVALID_ARTIFACT_ID"],
    ["artifact://0%00", "INVALID_ARTIFACT_ID"],
    [`artifact://${secret}`, "INVALID_ARTIFACT_ID"],
    ["artifact://-1", "INVALID_ARTIFACT_ID"],
    ["agent://../secret", "INVALID_AGENT_OUTPUT_ID"],
    ["agent://%2e%2e/secret", "INVALID_AGENT_OUTPUT_ID"],
    [`agent://${secret}`, "INVALID_AGENT_OUTPUT_ID"],
    ["agent://0-Notes/a", "PAGING_WITH_EXTRACTION"],
    ["agent://0-Notes/..%2F..%2Fsecret.txt", "PAGING_WITH_EXTRACTION"],
    ["agent://0-Notes?q=.a", "PAGING_WITH_EXTRACTION"],
    ["agent://0-Notes?q=.", "PAGING_WITH_EXTRACTION"],
    ["file:///etc/passwd", "INVALID_URL"],
  ])("%s is INVALID_INPUT (%s)", async (url, reason) => {
    const err = await expectStowageError(router.readBytes(url), "INVALID_INPUT", reason);
    expect(err.message).not.toContain("TOP SECRET");
  });

  it.each([
    ["../x", "traversal"],
    ["1/../../etc", "traversal after an id"],
    ["/etc/passwd", "absolute path"],
    ["1\u0000", "NUL"],
  ])("store ids %j are INVALID_INPUT (%s)", async (id) => {
    await expectStowageError(store.readArtifactBytes(id), "INVALID_INPUT", "INVALID_ARTIFACT_ID");
    await expectStowageError(store.readAgentOutputBytes(id), "INVALID_INPUT", "INVALID_AGENT_OUTPUT_ID");
  });

  it.each([
    [{ start: -1 }, "negative start"],
    [{ start: 1.5 }, "fractional start"],
    [{ start: Number.NaN }, "NaN start"],
    [{ start: Number.POSITIVE_INFINITY }, "infinite start"],
    [{ start: 2 ** 53 }, "start past the safe integers"],
    [{ start: "0" }, "string start"],
    [{ maxBytes: 0 }, "maxBytes 0"],
    [{ maxBytes: -1 }, "negative maxBytes"],
    [{ maxBytes: 1.5 }, "fractional maxBytes"],
    [{ maxBytes: MAX_READ_BYTES_LIMIT + 1 }, "maxBytes over the limit"],
    [{ maxBytes: "1" }, "string maxBytes"],
  ] as [object, string][])("options %j are INVALID_INPUT (%s)", async (options) => {
    for (const url of ["artifact://0", "agent://0-Notes"]) {
      await expectStowageError(
        router.readBytes(url, options as never),
        "INVALID_INPUT",
        "INVALID_READ_OPTION",
      );
    }
  });

  it("refuses planted links, a FIFO and a directory without following or hanging", async () => {
    await planted.saveArtifact("bash", "zero\n");
    await symlink(secret, join(planted.dir, "5.bash.log"));
    await symlink(secret, join(planted.dir, "0-Leak.md"));
    execFileSync("mkfifo", [join(planted.dir, "6.bash.log")]);
    execFileSync("mkfifo", [join(planted.dir, "1-Fifo.md")]);
    await mkdir(join(planted.dir, "7.bash.log"));
    for (const url of ["artifact://5", "agent://0-Leak", "artifact://6", "agent://1-Fifo", "artifact://7"]) {
      const err = await expectStowageError(plantedRouter.readBytes(url), "FORBIDDEN", "NOT_A_REGULAR_FILE");
      expect(err.message).not.toContain("TOP SECRET");
    }
    expect((await plantedRouter.readBytes("artifact://0")).bytes).toEqual(new TextEncoder().encode("zero\n"));
  });

  it("a missing id is NOT_FOUND, listing what exists", async () => {
    await expectStowageError(router.readBytes("artifact://99"), "NOT_FOUND", "ARTIFACT_NOT_FOUND");
    await expectStowageError(router.readBytes("agent://9-Missing"), "NOT_FOUND", "AGENT_OUTPUT_NOT_FOUND");
  });

  it("stops when the signal fires", async () => {
    const controller = new AbortController();
    controller.abort();
    await expectStowageError(router.readBytes("artifact://0", { signal: controller.signal }), "ABORTED");
    await expectStowageError(router.readBytes("agent://0-Notes", { signal: controller.signal }), "ABORTED");
  });
});
