import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

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
    remove: (path) => rm(path, { recursive: true, force: true }),
    dispose: () => rm(base, { recursive: true, force: true }),
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
