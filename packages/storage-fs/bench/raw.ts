// The raw node:fs operations a case compares with: the same guarantees as ours, nothing else.
import { createHash } from "node:crypto";
import { open, rename } from "node:fs/promises";
import { join } from "node:path";

let temps = 0;

/** Write a temp file, rename it into place: atomic, not durable. */
export async function rawPut(directory: string, name: string, body: Uint8Array): Promise<void> {
  const temp = join(directory, `.tmp-${temps++}`);
  const handle = await open(temp, "wx");
  await handle.write(body);
  await handle.close();
  await rename(temp, join(directory, name));
}

/** Write a temp file, fsync it, rename it into place, fsync the directory: atomic and durable. */
export async function rawDurablePut(directory: string, name: string, body: Uint8Array): Promise<void> {
  const temp = join(directory, `.tmp-${temps++}`);
  const handle = await open(temp, "wx");
  await handle.write(body);
  await handle.sync();
  await handle.close();
  await rename(temp, join(directory, name));
  await fsyncDirectory(directory);
}

/** The same for content-addressed bytes: sha256 while writing, the file named by its hash. */
export async function rawBlobPut(
  directory: string,
  chunks: Iterable<Uint8Array>,
  fsync: boolean,
): Promise<string> {
  const hash = createHash("sha256");
  const temp = join(directory, `.tmp-${temps++}`);
  const handle = await open(temp, "wx");
  for (const chunk of chunks) {
    hash.update(chunk);
    await handle.write(chunk);
  }
  if (fsync) await handle.sync();
  await handle.close();
  const digest = hash.digest("hex");
  await rename(temp, join(directory, digest));
  if (fsync) await fsyncDirectory(directory);
  return digest;
}

export async function fsyncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Runs `work(0 … count-1)` with `parallel` calls in flight. */
export async function inParallel(
  count: number,
  parallel: number,
  work: (index: number) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) await work(next++);
    }),
  );
}
