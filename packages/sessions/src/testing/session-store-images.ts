import { loadVitest, seededRandom } from "@stowage/core/testing";
import type { CompleteSessionStore, SessionKey, SessionStoreEntry } from "../session-store/types.js";

const { describe, expect, it } = await loadVitest("@stowage/sessions/testing");

/** Bytes that start like a PNG and go on as seeded noise: what a screenshot's base64 looks like to a store. */
function pngLike(seed: number, size: number): Buffer {
  const random = seededRandom(seed);
  const bytes = Buffer.alloc(size);
  for (let i = 0; i < size; i++) bytes[i] = Math.floor(random() * 256);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return bytes;
}

// Sizes whose base64 needs padding (two `=`, one `=`), so that unpadded forms differ from padded ones.
const png = pngLike(1, 6_001);
const other = pngLike(2, 9_002);
const pdf = Buffer.concat([Buffer.from("%PDF-1.7\n"), pngLike(3, 4_000).subarray(8)]);
const b64 = png.toString("base64");
const wrapped = (text: string, width: number, end: string, final: boolean) =>
  (text.match(new RegExp(`.{1,${width}}`, "g")) ?? []).join(end) + (final ? end : "");
const urlSafe = (text: string) => text.replaceAll("+", "-").replaceAll("/", "_");
const block = (data: string) => ({
  type: "image",
  source: { type: "base64", media_type: "image/png", data },
});
const userWith = (
  uuid: string,
  content: unknown[],
  extra: Record<string, unknown> = {},
): SessionStoreEntry => ({
  type: "user",
  uuid,
  message: { role: "user", content },
  ...extra,
});

/**
 * Entries with image and document payloads where each agent writes them, and written in every way
 * base64 is: whatever a store does with them, `load` must give back the same JSON text.
 */
function imageEntries(): SessionStoreEntry[] {
  return [
    // Claude Code's Read of an image: the tool_result's image block and toolUseResult.file.base64.
    userWith("read", [{ type: "tool_result", tool_use_id: "t1", content: [block(b64)] }], {
      toolUseResult: {
        type: "image",
        file: { base64: b64, type: "image/png", originalSize: png.byteLength },
      },
    }),
    // A tool result inside a tool result; a PDF document; an upper-case data URL as a whole text.
    userWith("nested", [
      { type: "tool_result", content: [{ type: "tool_result", content: [block(other.toString("base64"))] }] },
      {
        type: "document",
        source: { type: "base64", media_type: "application/pdf", data: pdf.toString("base64") },
      },
      { type: "text", text: `DATA:IMAGE/PNG;NAME=shot.png;BASE64,${b64}` },
    ]),
    // Codex: a pasted image in the prompt's item and in its event.
    {
      type: "response_item",
      uuid: "codex-item",
      payload: {
        type: "message",
        role: "user",
        content: [{ type: "input_image", image_url: `data:image/png;base64,${b64}` }],
      },
    },
    {
      type: "event_msg",
      payload: {
        type: "user_message",
        message: "see",
        images: [`data:image/png;base64,${b64}`, `data:image/jpeg;base64,${other.toString("base64")}`],
      },
    },
    // Base64 as tools write it: URL-safe, unpadded, MIME-wrapped, and shapes no encoder writes.
    userWith("forms", [
      block(urlSafe(b64)),
      block(urlSafe(b64).replace(/=+$/, "")),
      block(b64.replace(/=+$/, "")),
      block(wrapped(b64, 76, "\r\n", true)),
      block(wrapped(b64, 64, "\n", false)),
      block(`${b64.slice(0, 70)}\n${b64.slice(70)}`),
      block(`${b64.slice(0, 100)} ${b64.slice(100)}`),
      block(b64.replace("/", "_")),
    ]),
    // A ref the agent itself wrote, a payload just under 1,024 characters, keys named like Object's members.
    userWith("texts", [
      block(`blob:sha256:${"ab".repeat(32)}`),
      block(other.subarray(0, 765).toString("base64")),
    ]),
    JSON.parse(`{"type":"user","uuid":"proto","__proto__":{"content":[${JSON.stringify(block(b64))}]}}`),
  ];
}

/**
 * What every SessionStore gives back of entries that hold images and documents: the same entries,
 * to the byte of their JSON text, across batches, subpaths, compactions and retries, whether or not
 * the store keeps their payloads apart (a store given a blob store does).
 */
export function describeImagePayloads(store: CompleteSessionStore): void {
  describe("images and documents", () => {
    const main: SessionKey = { projectKey: "proj", sessionId: "images" };
    it("load gives back entries with image and document payloads exactly as appended, however their base64 is written", async () => {
      const entries = imageEntries();
      // Several batches: a store that compacts merges parts holding payloads.
      for (let start = 0; start < entries.length; start += 2)
        await store.append(main, entries.slice(start, start + 2));
      const loaded = await store.load(main);
      expect(JSON.stringify(loaded)).toBe(JSON.stringify(entries));
      expect(loaded).toEqual(entries);
      // A fork of the session (what the SDK's forkSession does through a store: load, then append
      // under a new id) keeps its images when the session it came from is deleted.
      const fork = { projectKey: "proj", sessionId: "images-fork" };
      await store.append(fork, loaded!);
      // A retry of what is stored adds no uuid-bearing entry; a subagent transcript keeps its own images.
      const withUuid = entries.filter((entry) => entry.uuid !== undefined);
      await store.append(main, withUuid);
      expect((await store.load(main))?.filter((entry) => entry.uuid !== undefined)).toEqual(withUuid);
      const sub = { ...main, subpath: "subagents/agent-img" };
      await store.append(sub, [entries[0]!]);
      expect(JSON.stringify(await store.load(sub))).toBe(JSON.stringify([entries[0]]));
      await store.delete(main);
      expect(await store.load(main)).toBeNull();
      expect(JSON.stringify(await store.load(fork))).toBe(JSON.stringify(entries));
    });

    it("entries loaded are the caller's own: changing one changes nothing stored", async () => {
      await store.append(main, [imageEntries()[0]!]);
      const loaded = (await store.load(main))!;
      (loaded[0]!.toolUseResult as { file: { base64: string } }).file.base64 = "changed";
      expect(JSON.stringify(await store.load(main))).toBe(JSON.stringify([imageEntries()[0]]));
    });
  });
}
