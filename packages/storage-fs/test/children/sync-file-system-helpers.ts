// Exercises syncFileSystem in a process of its own (so no other module copy starts helpers here)
// and prints what it saw: its answers, and its child processes (the helper shells, by pid and
// command line).
import { readdir, readFile } from "node:fs/promises";
import { syncFileSystem } from "../../src/journal/sync-file-system.js";

const [path] = process.argv.slice(2) as [string];

async function helpers(): Promise<Array<{ pid: number; command: string }>> {
  const found = [];
  for (const task of await readdir("/proc/self/task")) {
    const listed = await readFile(`/proc/self/task/${task}/children`, "latin1").catch(() => "");
    for (const pid of listed.split(" ").filter(Boolean)) {
      const command = (await readFile(`/proc/${pid}/cmdline`, "latin1").catch(() => ""))
        .split("\0")
        .join(" ");
      if (command.includes("while IFS= read")) found.push({ pid: Number(pid), command: command.trim() });
    }
  }
  return found;
}

async function untilNoHelper(): Promise<void> {
  for (let i = 0; i < 500 && (await helpers()).length > 0; i++) await new Promise((r) => setTimeout(r, 10));
}

const before = await helpers();
const first = await syncFileSystem(path);
const afterFirst = await helpers();
const concurrent = await Promise.all([syncFileSystem(path), syncFileSystem(path), syncFileSystem(path)]);
const afterConcurrent = await helpers();
process.kill(afterFirst[0]!.pid, "SIGKILL");
await untilNoHelper();
// The first call after the kill may still find the dead helper (answered false: its caller
// fsyncs each file that time); a later one is answered by a new helper.
const afterKill = [await syncFileSystem(path)];
if (!afterKill[0]) afterKill.push(await syncFileSystem(path));
const replaced = await helpers();
// Killed with a call in flight: that call answers false (its caller fsyncs each file) instead of
// leaving the process waiting.
process.kill(replaced[0]!.pid, "SIGKILL");
const killedInFlight = await syncFileSystem(path);
await untilNoHelper();
// Then what it refuses: a path with a newline (never sent: it would end the helper's line
// early) or not absolute (`sync` could take it for an option); then one `sync -f` refuses
// (missing), after which the process stops using it.
const refused = [
  await syncFileSystem(`${path}/a\nb`),
  await syncFileSystem("-f"),
  await syncFileSystem(path),
  await syncFileSystem(`${path}/missing/directory`),
  await syncFileSystem(path),
];
console.log(
  JSON.stringify({
    before,
    first,
    afterFirst,
    concurrent,
    afterConcurrent,
    afterKill,
    replaced,
    killedInFlight,
    refused,
  }),
);
