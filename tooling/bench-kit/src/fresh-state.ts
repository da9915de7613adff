import { rmSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunInfo } from "./comparison.js";

/** A temp directory for one bench process, handing out a new empty directory per run. */
export interface ScratchSpace {
  readonly base: string;
  /** A new empty directory `<base>/<name>-<n>`, never handed out before. */
  directory(name: string): Promise<string>;
  /** Removes a directory handed out (or anything under `base`). */
  remove(path: string): Promise<void>;
  /** Removes `base` and everything in it. */
  dispose(): Promise<void>;
}

export async function scratchSpace(label: string): Promise<ScratchSpace> {
  const base = await mkdtemp(join(tmpdir(), `stowage-bench-${label}-`));
  let next = 0;
  return {
    base,
    async directory(name) {
      const path = join(base, `${name}-${next++}`);
      await mkdir(path, { recursive: true });
      return path;
    },
    // Synchronous, and untimed: removing 10,000 small files took 0.9-2.2 s through the asynchronous
    // calls (each a trip through the thread pool) and 0.2 s through the synchronous ones, on the
    // 2-core VM these benches run on; a case removes a directory after every run.
    remove: async (path) => rmSync(path, { recursive: true, force: true }),
    dispose: () => rm(base, { recursive: true, force: true }),
  };
}

/**
 * A new directory each round, shared by that round's runs (`directory(run)`), for a case whose
 * state is costly to make and which no contender changes (files to list or read): each round still
 * starts from a directory written just before, and with the order rotated every contender meets it
 * first in some rounds. The round before's is removed when the next is made; `release` (the case's
 * `cleanup`) removes the last.
 */
export interface RoundDirectory {
  directory(run: RunInfo): Promise<string>;
  release(): Promise<void>;
}

export function directoryPerRound(
  scratch: ScratchSpace,
  name: string,
  fill: (directory: string) => Promise<void> | void,
): RoundDirectory {
  let current: { round: number; path: string } | undefined;
  const release = async () => {
    if (current) await scratch.remove(current.path);
    current = undefined;
  };
  return {
    async directory(run) {
      if (current?.round === run.round) return current.path;
      await release();
      const path = await scratch.directory(name);
      await fill(path);
      current = { round: run.round, path };
      return path;
    },
    release,
  };
}

/** What `freshDatabase` runs its `CREATE DATABASE` and `DROP DATABASE` through (a pg Pool or Client on the admin URL). */
export interface DatabaseAdmin {
  query(sql: string): Promise<unknown>;
}

export interface FreshDatabase {
  name: string;
  /** The admin URL with its database replaced by this one. */
  url: string;
  /** Drops the database, closing whatever is still connected to it. */
  drop(): Promise<void>;
}

let databases = 0;

/**
 * A new, empty PostgreSQL database (cold: no table, no cache of a previous run's), made through
 * `admin` on the server of `adminUrl`. Close your own pool on it before `drop()` when you can.
 */
export async function freshDatabase(
  admin: DatabaseAdmin,
  adminUrl: string,
  label: string,
): Promise<FreshDatabase> {
  const name = `bench_${label.toLowerCase().replace(/[^a-z0-9]+/g, "_")}_${process.pid}_${databases++}`.slice(
    0,
    63,
  );
  await admin.query(`CREATE DATABASE "${name}"`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: async () => {
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    },
  };
}

/**
 * The end of a case's fresh state on PostgreSQL: a `CHECKPOINT`, the server's `sync`. The server
 * checkpoints once enough WAL has been written since the last one (about 540 MB with the default
 * `max_wal_size`), so a run that starts with the WAL of the runs before it pays their checkpoint
 * in its own time; a 200,000-entry SessionStore append writes about 520 MB. Needs a superuser or
 * the `pg_checkpoint` role.
 */
export async function checkpointDatabase(admin: DatabaseAdmin): Promise<void> {
  await admin.query("CHECKPOINT");
}
