// Two processes deleting one session's uploads into the trash at once each create a mark of their
// own, create-only (`upload-trash/<kind>/<id>/<sessionId>/<at>-<random>-<by>.json`, `{ at, by }`):
// the later time is in force whichever put lands last, however late (an older mark landing after
// the later deletion has returned too), and nothing is lost: every upload last changed by the
// mark in force (one written between the two deletions too) is in the trash, listed once,
// restorable, and purged exactly once by `sweepTrashedUploads` after the grace, even with two
// sweeps, a restore or a new deletion running meanwhile; a process killed once its mark has landed
// loses nothing. Each "process" is an upload service over its own client of a shared store (the fs
// store's root, or a prefix on Ceph RGW), with its own clock; a gate on its store holds one call
// where the interleaving needs it. Two cases run real child processes. The memory store has no
// direct URLs, so no upload service runs over it. Times are the store's own (read back after each
// write); expected values are written out, never measured.
import { randomUUID } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ObjectStore, Principal } from "@stowage/core";
import { createFsObjectStore } from "@stowage/storage-fs";
import { createS3Client, createS3ObjectStore } from "@stowage/storage-s3";
import { spawnChild, tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { createUploadService } from "../src/index.js";
import { emptyStore, rgw, rgwSkipReason } from "./support/rgw.js";

const alice: Principal = { kind: "user", id: "alice" };
const GRACE_MS = 60_000;
const SECRET = "a test secret of at least 32 bytes!";
const trashChild = new URL("./children/trash-session-uploads.ts", import.meta.url);
const bytes = (text: string) => new TextEncoder().encode(text);
const uploadKeyOf = (sessionId: string, filename: string) =>
  `sessions/user/alice/${sessionId}/artifacts/${filename}`;
const marksPrefixOf = (sessionId: string) => `upload-trash/user/alice/${sessionId}/`;
/** A mark's name: its time (16 digits of ms, so that names sort by time), a random part, who. */
const MARK_NAME = /^(\d{16})-[0-9a-f]{16}-(.+)\.json$/;
const isUpload = (key: string) => key.startsWith("sessions/");
const base = await tempDirectory("stowage-uploads-trash-race-");

/** A store shared by every "process" of one test: how each opens its own client, and how a child names it. */
interface Shared {
  open(): ObjectStore;
  where: string;
}

const sharedStores: [string, boolean, () => Shared][] = [
  [
    "the fs store",
    true,
    () => {
      const root = join(base, randomUUID());
      return {
        where: `fs:${root}`,
        open: () =>
          createFsObjectStore({ root, directUrls: { baseUrl: "http://127.0.0.1:9/direct", secret: SECRET } }),
      };
    },
  ],
  [
    "Ceph RGW",
    rgwSkipReason === undefined,
    () => {
      const prefix = `test/uploads-trash-race/${randomUUID()}/`;
      return {
        where: `s3:${prefix}`,
        open: () =>
          createS3ObjectStore({
            client: createS3Client({
              endpoint: rgw.values.S3_ENDPOINT!,
              region: process.env.S3_REGION || "us-east-1",
              accessKeyId: rgw.values.S3_ACCESS_KEY_ID!,
              secretAccessKey: rgw.values.S3_SECRET_ACCESS_KEY!,
            }),
            bucket: rgw.values.S3_BUCKET!,
            prefix,
            verifiesUploadChecksums: false,
          }),
      };
    },
  ],
];

type GatedOp = "get" | "head" | "put" | "delete" | "iterate" | "touch";

/** One call held until released: `reached` once the call is made (it has not run yet). */
interface Held {
  reached: Promise<void>;
  release(): void;
}

/** `inner`, with a way to hold the next call of some operations on a key that `match` takes. */
function gated(inner: ObjectStore) {
  const holds: {
    ops: readonly GatedOp[];
    match: (key: string) => boolean;
    reach(): void;
    gate: Promise<void>;
  }[] = [];
  const pass = async (op: GatedOp, key: string) => {
    const index = holds.findIndex((hold) => hold.ops.includes(op) && hold.match(key));
    if (index < 0) return;
    const [hold] = holds.splice(index, 1);
    hold!.reach();
    await hold!.gate;
  };
  const store: ObjectStore = {
    ...inner,
    async get(key, options) {
      await pass("get", key);
      return inner.get(key, options);
    },
    async head(key, options) {
      await pass("head", key);
      return inner.head(key, options);
    },
    async put(key, body, options) {
      await pass("put", key);
      return inner.put(key, body, options);
    },
    async delete(key, options) {
      await pass("delete", key);
      return inner.delete(key, options);
    },
    async touch(key, options) {
      await pass("touch", key);
      return inner.touch(key, options);
    },
    iterate(options) {
      return (async function* () {
        await pass("iterate", options?.prefix ?? "");
        yield* inner.iterate(options);
      })();
    },
  };
  const hold = (ops: readonly GatedOp[], match: (key: string) => boolean): Held => {
    let reach!: () => void;
    let release!: () => void;
    const reached = new Promise<void>((resolve) => {
      reach = resolve;
    });
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    holds.push({ ops, match, reach, gate });
    return { reached, release };
  };
  return { store, hold };
}

describe.each(sharedStores)(
  "deleting one session's uploads into the trash at once, on %s",
  (_name, ready, share) => {
    /** One session's test: its shared store and a way to start a "process" (a service) over it. */
    function session() {
      const shared = share();
      const sessionId = `s-${randomUUID()}`;
      const plain = shared.open();
      const processOf = (now: () => number = Date.now) => {
        const { store, hold } = gated(shared.open());
        const uploads = createUploadService({
          store,
          sessionExists: (principal, id) => principal.id === "alice" && id === sessionId,
          now,
        });
        return { store, hold, uploads };
      };
      /** The time a listing gives `key` (a HEAD may give it to the second only: S3). */
      const listedTime = async (key: string) => {
        for await (const item of plain.iterate({ prefix: key }))
          if (item.key === key) return item.lastModified.getTime();
        throw new Error(`${key} is not listed`);
      };
      /** Puts `key` until its time (HEAD's and the listing's) is after `after`; its listed time. */
      const putAfter = async (key: string, text: string, after?: number) => {
        for (;;) {
          await plain.put(key, bytes(text));
          const info = await plain.head(key);
          if (after === undefined || info!.lastModified.getTime() > after) return listedTime(key);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      };
      const putUpload = (filename: string, text: string, after?: number) =>
        putAfter(uploadKeyOf(sessionId, filename), text, after);
      /** Waits until what the store stamps now is after `after` (to the second on S3's HEAD). */
      const storeTimePasses = async (after: number) => {
        await putAfter(`clock/${sessionId}`, "tick", after);
        await plain.delete(`clock/${sessionId}`);
      };
      /** The session's marks in key order, which is time order: `{ at, by }`, as named and as stored. */
      const marks = async () => {
        const found: { at: string; by: string }[] = [];
        for await (const item of plain.iterate({ prefix: marksPrefixOf(sessionId) })) {
          const [, at, by] = MARK_NAME.exec(item.key.slice(marksPrefixOf(sessionId).length))!;
          const named = { at: new Date(Number(at)).toISOString(), by: by! };
          expect(JSON.parse(new TextDecoder().decode((await plain.get(item.key))!))).toEqual(named);
          found.push(named);
        }
        return found;
      };
      /** The mark in force: the latest, the last listed. */
      const mark = async () => (await marks()).at(-1);
      const observer = processOf();
      const live = async () =>
        (await observer.uploads.listUploads(alice, sessionId)).map((upload) => upload.filename);
      const trashed = async () =>
        (await observer.uploads.listExpiredUploads(alice, { sessionId })).map(
          ({ filename, deletedBy, expiresAt }) => `${filename} by ${deletedBy} at ${expiresAt.getTime()}`,
        );
      /** A sweep by a process whose clock says `now`: what it purged, by whom. */
      const sweep = async (now: number, sweeper = processOf(() => now)) => {
        const swept: string[] = [];
        const count = await sweeper.uploads.sweepTrashedUploads({
          graceMs: GRACE_MS,
          onSwept: (gone, by) => {
            swept.push(...gone.map((upload) => `${upload.filename} by ${by}`));
          },
        });
        expect(count).toBe(swept.length);
        return swept;
      };
      const cleanUp = () => emptyStore(plain);
      return {
        shared,
        sessionId,
        plain,
        processOf,
        putUpload,
        storeTimePasses,
        marks,
        mark,
        observer,
        live,
        trashed,
        sweep,
        cleanUp,
      };
    }

    /** a.txt and b.txt (12 bytes) by `early`; between.txt (7 bytes) after it; after.txt after `late`. */
    async function fourUploads(s: ReturnType<typeof session>) {
      const early = Math.max(await s.putUpload("a.txt", "first"), await s.putUpload("b.txt", "second!"));
      const late = await s.putUpload("between.txt", "between", early);
      await s.putUpload("after.txt", "after", late);
      return { early, late };
    }

    /** Two deletions of the four uploads: A's clock says `early`, B's `late`. */
    function twoDeletions(s: ReturnType<typeof session>, { early, late }: { early: number; late: number }) {
      const a = s.processOf(() => early);
      const b = s.processOf(() => late);
      const deleteBy = (deleter: typeof a, by: string) =>
        deleter.uploads.trashSessionUploads(alice, s.sessionId, { by });
      const isMark = (key: string) => key.startsWith(marksPrefixOf(s.sessionId));
      const tookEarly = { trashedAt: new Date(early), uploads: 2, bytes: 12 };
      const tookLate = { trashedAt: new Date(late), uploads: 3, bytes: 19 };
      const bothMarks = [
        { at: new Date(early).toISOString(), by: "key:A" },
        { at: new Date(late).toISOString(), by: "key:B" },
      ];
      return { a, b, deleteBy, isMark, tookEarly, tookLate, bothMarks };
    }

    it.skipIf(!ready).each([
      ["the earlier mark lands first, its deletion held before it counts", "first"],
      ["the earlier mark lands first, its deletion held before it reads the mark in force", "read"],
      ["the later deletion runs first, from start to end", "later first"],
      ["the earlier mark lands while the later deletion counts", "over"],
    ] as const)(
      "%s: the later mark is in force; all it takes is trashed once, restorable, swept once after the grace",
      async (_case, order) => {
        const s = session();
        try {
          const { early, late } = await fourUploads(s);
          const { a, b, deleteBy, isMark, tookEarly, tookLate, bothMarks } = twoDeletions(s, {
            early,
            late,
          });
          let reports: [Awaited<ReturnType<typeof deleteBy>>, Awaited<ReturnType<typeof deleteBy>>];
          if (order === "first" || order === "read") {
            // A's mark is down; A is held before it counts (or reads the mark in force) while B
            // deletes from start to end.
            const held = order === "first" ? a.hold(["iterate"], isUpload) : a.hold(["iterate"], isMark);
            const byA = deleteBy(a, "key:A");
            await held.reached;
            const byB = await deleteBy(b, "key:B");
            held.release();
            reports = [await byA, byB];
          } else if (order === "later first") {
            const byB = await deleteBy(b, "key:B");
            reports = [await deleteBy(a, "key:A"), byB];
          } else {
            // A is held before its put; B's later mark is down and B is held before it counts; A's
            // earlier mark then lands beside it, and B counts after A has returned.
            const putting = a.hold(["put"], isMark);
            const byA = deleteBy(a, "key:A");
            await putting.reached;
            const counting = b.hold(["iterate"], isUpload);
            const byB = deleteBy(b, "key:B");
            await counting.reached;
            putting.release();
            const reportA = await byA;
            expect(await s.marks()).toEqual(bothMarks);
            counting.release();
            reports = [reportA, await byB];
          }
          // A deletion that finds the later mark down by the time it reads reports what that one took.
          expect(reports).toEqual(order === "first" ? [tookEarly, tookLate] : [tookLate, tookLate]);
          expect(await s.marks()).toEqual(bothMarks);
          expect(await s.live()).toEqual(["after.txt"]);
          expect(await s.trashed()).toEqual([
            `a.txt by key:B at ${late}`,
            `b.txt by key:B at ${late}`,
            `between.txt by key:B at ${late}`,
          ]);

          await s.storeTimePasses(late);
          expect(await s.observer.uploads.restoreExpiredUpload(alice, s.sessionId, "a.txt")).toBe(true);
          expect(await s.live()).toEqual(["a.txt", "after.txt"]);
          expect(await s.trashed()).toEqual([`b.txt by key:B at ${late}`, `between.txt by key:B at ${late}`]);
          // Past A's grace, not B's: the mark in force is B's, and it decides.
          expect(await s.sweep(late + GRACE_MS - 1)).toEqual([]);
          expect(await s.marks()).toEqual(bothMarks);
          expect(await s.sweep(late + GRACE_MS)).toEqual(["b.txt by key:B", "between.txt by key:B"]);
          expect(await s.plain.head(uploadKeyOf(s.sessionId, "between.txt"))).toBeNull();
          expect(await s.marks()).toEqual([]);
          expect(await s.sweep(late + GRACE_MS)).toEqual([]);
          expect(await s.trashed()).toEqual([]);
          expect(await s.live()).toEqual(["a.txt", "after.txt"]);
          expect(await s.plain.get(uploadKeyOf(s.sessionId, "a.txt"))).toEqual(bytes("first"));
        } finally {
          await s.cleanUp();
        }
      },
    );

    it.skipIf(!ready)(
      "the window a single shared mark left: the earlier mark's put lands after the later deletion has returned, and the later mark stays in force",
      async () => {
        const s = session();
        try {
          const { early, late } = await fourUploads(s);
          const { a, b, deleteBy, isMark, tookLate, bothMarks } = twoDeletions(s, { early, late });
          // A is held just before its mark's put (a put slower than a whole deletion): B deletes
          // from start to end and returns, then A's earlier mark lands, last of all.
          const putting = a.hold(["put"], isMark);
          const byA = deleteBy(a, "key:A");
          await putting.reached;
          expect(await deleteBy(b, "key:B")).toEqual(tookLate);
          expect(await s.mark()).toEqual({ at: new Date(late).toISOString(), by: "key:B" });
          putting.release();
          expect(await byA).toEqual(tookLate);
          // Landed last, the earlier mark is only beside the later one: nothing B reported is handed back.
          expect(await s.marks()).toEqual(bothMarks);
          expect(await s.mark()).toEqual({ at: new Date(late).toISOString(), by: "key:B" });
          expect(await s.live()).toEqual(["after.txt"]);
          expect(await s.trashed()).toEqual([
            `a.txt by key:B at ${late}`,
            `b.txt by key:B at ${late}`,
            `between.txt by key:B at ${late}`,
          ]);
          expect(await s.sweep(late + GRACE_MS)).toEqual([
            "a.txt by key:B",
            "b.txt by key:B",
            "between.txt by key:B",
          ]);
          expect(await s.marks()).toEqual([]);
          expect(await s.live()).toEqual(["after.txt"]);
        } finally {
          await s.cleanUp();
        }
      },
    );

    it.skipIf(!ready)(
      "two deletions of one millisecond: both marks stay, every reader and both reports agree on the one in force",
      async () => {
        const s = session();
        try {
          const at = Math.max(await s.putUpload("a.txt", "first"), await s.putUpload("b.txt", "second!"));
          const a = s.processOf(() => at);
          const b = s.processOf(() => at);
          const reports = await Promise.all([
            a.uploads.trashSessionUploads(alice, s.sessionId, { by: "key:A" }),
            b.uploads.trashSessionUploads(alice, s.sessionId, { by: "key:B" }),
          ]);
          const marks = await s.marks();
          expect(marks.map((mark) => mark.by).sort()).toEqual(["key:A", "key:B"]);
          const inForce = (await s.mark())!;
          for (const report of reports)
            expect(report).toEqual({ trashedAt: new Date(at), uploads: 2, bytes: 12 });
          expect(await s.trashed()).toEqual([
            `a.txt by ${inForce.by} at ${at}`,
            `b.txt by ${inForce.by} at ${at}`,
          ]);
          expect(await s.sweep(at + GRACE_MS)).toEqual([`a.txt by ${inForce.by}`, `b.txt by ${inForce.by}`]);
          expect(await s.marks()).toEqual([]);
        } finally {
          await s.cleanUp();
        }
      },
    );

    it.skipIf(!ready)(
      "two sweeps at once purge each upload once, and one restored meanwhile stays",
      async () => {
        const s = session();
        try {
          const early = Math.max(
            await s.putUpload("a.txt", "first"),
            await s.putUpload("b.txt", "second!"),
            await s.putUpload("c.txt", "third"),
          );
          await s.processOf(() => early).uploads.trashSessionUploads(alice, s.sessionId, { by: "key:A" });
          await s.storeTimePasses(early);
          // Sweep 1 has listed the session and is held before it deals with a.txt.
          const one = s.processOf(() => early + GRACE_MS);
          const dealing = one.hold(["head", "delete"], (key) => key === uploadKeyOf(s.sessionId, "a.txt"));
          const first = s.sweep(early + GRACE_MS, one);
          await dealing.reached;
          // Meanwhile c.txt is restored, and sweep 2 runs from start to end.
          expect(await s.observer.uploads.restoreExpiredUpload(alice, s.sessionId, "c.txt")).toBe(true);
          const second = await s.sweep(early + GRACE_MS);
          dealing.release();
          expect([...(await first), ...second].sort()).toEqual(["a.txt by key:A", "b.txt by key:A"]);
          expect(await s.live()).toEqual(["c.txt"]);
          expect(await s.plain.get(uploadKeyOf(s.sessionId, "c.txt"))).toEqual(bytes("third"));
          expect(await s.trashed()).toEqual([]);
          expect(await s.marks()).toEqual([]);
        } finally {
          await s.cleanUp();
        }
      },
    );

    it.skipIf(!ready).each([
      ["before it deals with a.txt", "upload", { trashedAt: "late", uploads: 3, bytes: 19 }],
      ["before it deletes the marks it listed", "marks", { trashedAt: "late", uploads: 1, bytes: 7 }],
    ] as const)(
      "a sweep of the old mark held %s leaves the later mark a deletion put meanwhile, and what it takes",
      async (_case, holdAt, took) => {
        const s = session();
        try {
          const { early, late } = await fourUploads(s);
          await s.processOf(() => early).uploads.trashSessionUploads(alice, s.sessionId, { by: "key:A" });
          // The sweep has read A's mark (past its grace) and listed; held before it deals with
          // a.txt, or once it has purged what A's mark took, before it deletes A's mark.
          const sweeper = s.processOf(() => early + GRACE_MS);
          const dealing =
            holdAt === "upload"
              ? sweeper.hold(["head", "delete"], (key) => key === uploadKeyOf(s.sessionId, "a.txt"))
              : sweeper.hold(["delete"], (key) => key.startsWith(marksPrefixOf(s.sessionId)));
          const swept = s.sweep(early + GRACE_MS, sweeper);
          await dealing.reached;
          expect(
            await s.processOf(() => late).uploads.trashSessionUploads(alice, s.sessionId, { by: "key:B" }),
          ).toEqual({ ...took, trashedAt: new Date(late) });
          dealing.release();
          expect(await swept).toEqual(["a.txt by key:A", "b.txt by key:A"]);
          expect(await s.marks()).toEqual([{ at: new Date(late).toISOString(), by: "key:B" }]);
          expect(await s.trashed()).toEqual([`between.txt by key:B at ${late}`]);
          expect(await s.live()).toEqual(["after.txt"]);
          expect(await s.sweep(late + GRACE_MS)).toEqual(["between.txt by key:B"]);
          expect(await s.marks()).toEqual([]);
          expect(await s.live()).toEqual(["after.txt"]);
        } finally {
          await s.cleanUp();
        }
      },
    );

    /** A child deleting the session's uploads (see children/trash-session-uploads.ts). */
    function child(s: ReturnType<typeof session>, by: string, goFile: string, crash?: "crash") {
      const spawned = spawnChild(trashChild, [
        s.shared.where,
        s.sessionId,
        by,
        goFile,
        ...(crash ? [crash] : []),
      ]);
      let stdout = "";
      let stderr = "";
      spawned.stderr!.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const ready = new Promise<void>((resolve) => {
        spawned.stdout!.on("data", (chunk: Buffer) => {
          stdout += chunk.toString();
          if (stdout.startsWith("ready\n")) resolve();
        });
      });
      const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        spawned.on("close", (code, signal) => resolve({ code, signal })),
      );
      return { ready, done, output: () => ({ stdout: stdout.slice("ready\n".length), stderr }) };
    }

    it.skipIf(!ready)(
      "two real processes at once: the later mark is in force, all of it trashed once, swept once",
      async () => {
        const s = session();
        try {
          await s.putUpload("a.txt", "first");
          await s.putUpload("b.txt", "second!");
          const goFile = join(base, `${s.sessionId}.go`);
          const children = [child(s, "key:A", goFile), child(s, "key:B", goFile)];
          await Promise.all(children.map((c) => c.ready));
          await writeFile(goFile, "go");
          const reports: { trashedAt: string; uploads: number; bytes: number }[] = [];
          for (const c of children) {
            expect(await c.done).toEqual({ code: 0, signal: null });
            expect(c.output().stderr).toBe("");
            reports.push(JSON.parse(c.output().stdout));
          }
          for (const report of reports) expect(report).toMatchObject({ uploads: 2, bytes: 12 });
          // Each created a mark of its own; the later one is in force, whichever put landed last,
          // and its deletion reported it (the other reported its own or, once down, the later).
          const marks = await s.marks();
          expect(marks.map((mark) => mark.by).sort()).toEqual(["key:A", "key:B"]);
          const mark = (await s.mark())!;
          const at = Date.parse(mark.at);
          expect(at).toBe(Math.max(...marks.map((each) => Date.parse(each.at))));
          expect(reports[mark.by === "key:A" ? 0 : 1]!.trashedAt).toBe(mark.at);
          expect(Math.max(...reports.map((report) => Date.parse(report.trashedAt)))).toBe(at);
          expect(await s.trashed()).toEqual([`a.txt by ${mark.by} at ${at}`, `b.txt by ${mark.by} at ${at}`]);
          expect(await s.live()).toEqual([]);
          expect(await s.sweep(at + GRACE_MS)).toEqual([`a.txt by ${mark.by}`, `b.txt by ${mark.by}`]);
          expect(await s.marks()).toEqual([]);
          expect(await s.sweep(at + GRACE_MS)).toEqual([]);
        } finally {
          await s.cleanUp();
        }
      },
    );

    it.skipIf(!ready)(
      "a process killed the moment its mark landed loses nothing: trashed, restorable, swept once",
      async () => {
        const s = session();
        try {
          const early = Math.max(await s.putUpload("a.txt", "first"), await s.putUpload("b.txt", "second!"));
          const goFile = join(base, `${s.sessionId}.go`);
          const killed = child(s, "key:killed", goFile, "crash");
          await killed.ready;
          await writeFile(goFile, "go");
          expect(await killed.done).toEqual({ code: null, signal: "SIGKILL" });
          expect(killed.output()).toEqual({ stdout: "", stderr: "" });
          const marks = await s.marks();
          expect(marks.map((mark) => mark.by)).toEqual(["key:killed"]);
          const at = Date.parse(marks[0]!.at);
          expect(at).toBeGreaterThanOrEqual(early);
          expect(await s.live()).toEqual([]);
          expect(await s.trashed()).toEqual([`a.txt by key:killed at ${at}`, `b.txt by key:killed at ${at}`]);
          await s.storeTimePasses(at);
          expect(await s.observer.uploads.restoreExpiredUpload(alice, s.sessionId, "a.txt")).toBe(true);
          expect(await s.live()).toEqual(["a.txt"]);
          expect(await s.sweep(at + GRACE_MS)).toEqual(["b.txt by key:killed"]);
          expect(await s.marks()).toEqual([]);
          expect(await s.sweep(at + GRACE_MS)).toEqual([]);
          expect(await s.live()).toEqual(["a.txt"]);
        } finally {
          await s.cleanUp();
        }
      },
    );
  },
);
