import { expectStowageError, loadVitest } from "@stowage/core/testing";
import type {
  CompleteSessionStore,
  SessionKey,
  SessionStoreDeleteOptions,
  SessionStoreEntry,
  SessionStoreTrash,
} from "../session-store/types.js";
import { HOSTILE_IDS } from "./hostile-ids.js";

const { describe, expect, it } = await loadVitest("@stowage/sessions/testing");

/** A store with Stowage's trash, as the conformance suite reaches the one of the running test. */
export type TrashingSessionStore = Omit<CompleteSessionStore, "delete"> &
  SessionStoreTrash & {
    delete(key: SessionKey, options?: SessionStoreDeleteOptions): Promise<void>;
  };

const DAY_MS = 24 * 60 * 60 * 1000;
/** Trash days that are over as soon as they start (86 µs): the next purge takes the transcript. */
const OVER_AT_ONCE = 1e-9;
const entry = (type: string, uuid: string): SessionStoreEntry => ({
  type,
  uuid,
  message: { text: `${type} ${uuid}` },
});
const main: SessionKey = { projectKey: "proj", sessionId: "trashed" };
const sub: SessionKey = { ...main, subpath: "subagents/agent-a" };

/** A main transcript and a subagent's, as the SDK writes them. */
async function writeSession(store: TrashingSessionStore, key: SessionKey = main) {
  const mainEntries = [entry("user", `${key.sessionId}-u1`), entry("assistant", `${key.sessionId}-a1`)];
  const subEntries = [entry("user", `${key.sessionId}-s1`)];
  await store.append(key, mainEntries);
  await store.append({ ...key, subpath: sub.subpath! }, subEntries);
  return { mainEntries, subEntries };
}

/** The cases of a SessionStore with a trash (`SessionStoreTrash`): what `delete` keeps and gives back. */
export function describeSessionStoreTrash(store: TrashingSessionStore): void {
  describe("the trash", () => {
    it("a delete hides the transcript and its subkeys from every read, lists it, and a restore gives it back exactly", async () => {
      const { mainEntries, subEntries } = await writeSession(store);
      const before = Date.now();
      await store.delete(main);
      expect(await store.load(main)).toBeNull();
      expect(await store.load(sub)).toBeNull();
      expect(await store.listSessions(main.projectKey)).toEqual([]);
      expect(await store.listSessionSummaries(main.projectKey)).toEqual([]);
      expect(await store.listSubkeys(main)).toEqual([]);
      const [item, ...others] = await store.listTrash(main.projectKey);
      expect(others).toEqual([]);
      expect(item).toMatchObject({ projectKey: "proj", sessionId: "trashed" });
      expect(item!.subpath).toBeUndefined();
      expect(item!.bytes).toBeGreaterThan(0);
      expect(Date.parse(item!.trashedAt)).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(item!.purgeAfter) - Date.parse(item!.trashedAt)).toBe(7 * DAY_MS);
      expect(await store.listTrash("other-project")).toEqual([]);

      expect(await store.restoreFromTrash(main.projectKey, item!.trashId)).toEqual(item);
      expect(await store.load(main)).toEqual(mainEntries);
      expect(await store.load(sub)).toEqual(subEntries);
      expect((await store.listSessions(main.projectKey)).map((s) => s.sessionId)).toEqual(["trashed"]);
      expect(await store.listSubkeys(main)).toEqual([sub.subpath]);
      expect(await store.listTrash(main.projectKey)).toEqual([]);
      // Appends go on after the restore, idempotent on the uuids it brought back.
      await store.append(main, [mainEntries[0]!, entry("user", "u2")]);
      expect((await store.load(main))?.map((e) => e.uuid)).toEqual([...mainEntries.map((e) => e.uuid), "u2"]);
      await expectStowageError(
        store.restoreFromTrash(main.projectKey, item!.trashId),
        "NOT_FOUND",
        "NOT_IN_TRASH",
      );
    });

    it("a subkey deleted alone goes alone; the main transcript stays", async () => {
      const { mainEntries, subEntries } = await writeSession(store);
      await store.delete(sub);
      expect(await store.load(main)).toEqual(mainEntries);
      expect(await store.load(sub)).toBeNull();
      const [item] = await store.listTrash(main.projectKey);
      expect(item).toMatchObject({ sessionId: "trashed", subpath: sub.subpath });
      await store.restoreFromTrash(main.projectKey, item!.trashId);
      expect(await store.load(sub)).toEqual(subEntries);
    });

    it("a key written again since its delete: the restore is CONFLICT and both stay; a purge then leaves the new one", async () => {
      await writeSession(store);
      await store.delete(main);
      const [item] = await store.listTrash(main.projectKey);
      const fresh = [entry("user", "fresh")];
      await store.append(main, fresh);
      await expectStowageError(
        store.restoreFromTrash(main.projectKey, item!.trashId),
        "CONFLICT",
        "TRANSCRIPT_REUSED",
      );
      expect(await store.load(main)).toEqual(fresh);
      expect((await store.listTrash(main.projectKey)).map((t) => t.trashId)).toEqual([item!.trashId]);
      expect(await store.purgeFromTrash(main.projectKey, item!.trashId)).toEqual(item);
      expect(await store.listTrash(main.projectKey)).toEqual([]);
      expect(await store.load(main)).toEqual(fresh);
      await expectStowageError(
        store.purgeFromTrash(main.projectKey, item!.trashId),
        "NOT_FOUND",
        "NOT_IN_TRASH",
      );
    });

    it("trashDays 0 deletes at once; a purge of what is past its days takes it, and nothing younger", async () => {
      await writeSession(store, { projectKey: "proj", sessionId: "now" });
      await store.delete({ projectKey: "proj", sessionId: "now" }, { trashDays: 0 });
      expect(await store.listTrash("proj")).toEqual([]);
      expect(await store.load({ projectKey: "proj", sessionId: "now" })).toBeNull();

      await writeSession(store, { projectKey: "proj", sessionId: "soon" });
      await writeSession(store, { projectKey: "proj", sessionId: "later" });
      await store.delete({ projectKey: "proj", sessionId: "soon" }, { trashDays: OVER_AT_ONCE });
      await store.delete({ projectKey: "proj", sessionId: "later" });
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect(await store.purgeExpiredTrash()).toBe(1);
      expect((await store.listTrash("proj")).map((t) => t.sessionId)).toEqual(["later"]);
      expect(await store.purgeExpiredTrash()).toBe(0);
    });

    it("another project's trash is not reached: its ids are NOT_FOUND from here", async () => {
      await writeSession(store, { projectKey: "tenant-a", sessionId: "s" });
      await store.delete({ projectKey: "tenant-a", sessionId: "s" });
      const [item] = await store.listTrash("tenant-a");
      expect(await store.listTrash("tenant-b")).toEqual([]);
      await expectStowageError(
        store.restoreFromTrash("tenant-b", item!.trashId),
        "NOT_FOUND",
        "NOT_IN_TRASH",
      );
      await expectStowageError(store.purgeFromTrash("tenant-b", item!.trashId), "NOT_FOUND", "NOT_IN_TRASH");
      expect((await store.listTrash("tenant-a")).map((t) => t.trashId)).toEqual([item!.trashId]);
    });

    it("refuses hostile trash ids, project keys and trash days, and changes nothing", async () => {
      const { mainEntries } = await writeSession(store);
      for (const { value } of HOSTILE_IDS) {
        await expectStowageError(store.restoreFromTrash("proj", value as string), "INVALID_INPUT");
        await expectStowageError(store.purgeFromTrash("proj", value as string), "INVALID_INPUT");
      }
      for (const projectKey of ["..", "a/b", "", "~trash", "x".repeat(256)]) {
        await expectStowageError(store.listTrash(projectKey), "INVALID_INPUT");
        await expectStowageError(store.restoreFromTrash(projectKey, "t"), "INVALID_INPUT");
      }
      for (const trashDays of [-1, Number.NaN, 366, "7" as never, Number.POSITIVE_INFINITY]) {
        await expectStowageError(store.delete(main, { trashDays }), "INVALID_INPUT");
      }
      await expectStowageError(store.purgeExpiredTrash({ limit: 0 }), "INVALID_INPUT");
      expect(await store.load(main)).toEqual(mainEntries);
      expect(await store.listTrash("proj")).toEqual([]);
    });
  });
}
