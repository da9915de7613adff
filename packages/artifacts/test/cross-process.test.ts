import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createArtifactStore, createInternalUrlRouter } from "@stowage/artifacts";
import { expectStowageError } from "@stowage/core/testing";
import { spawnChild, tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";

const base = await tempDirectory("stowage-artifacts-processes-");
const PER_CHILD = 1000;
const allocate = new URL("./children/allocate.ts", import.meta.url);
const slowTool = new URL("./children/slow-tool.ts", import.meta.url);

/** Runs two allocating children that start together (both wait for a go file). */
async function twoChildren(kind: "artifact" | "agent", dir: string) {
  const goFile = `${dir}.go`;
  const children = ["bash", "python"].map((name) => {
    const child = spawnChild(allocate, [kind, dir, String(PER_CHILD), name, goFile]);
    let stdout = "";
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const ready = new Promise<void>((resolve) => {
      child.stdout!.on("data", (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.startsWith("ready\n")) resolve();
      });
    });
    const done = new Promise<{ code: number | null }>((resolve) =>
      child.on("close", (code) => resolve({ code })),
    );
    return { ready, done, output: () => ({ stdout, stderr }) };
  });
  await Promise.all(children.map((child) => child.ready));
  await writeFile(goFile, "go");
  const results = [];
  for (const child of children) {
    const { code } = await child.done;
    const { stdout, stderr } = child.output();
    expect(stderr).toBe("");
    expect(code).toBe(0);
    results.push(JSON.parse(stdout.slice("ready\n".length)) as string[]);
  }
  return results as [string[], string[]];
}

/** True when the two id lists interleave (the processes really competed). */
function overlap(a: readonly number[], b: readonly number[]): boolean {
  return Math.min(...a) < Math.max(...b) && Math.min(...b) < Math.max(...a);
}

describe("two processes sharing an artifacts directory", () => {
  it("allocate 2,000 distinct artifact ids and overwrite nothing", async () => {
    const dir = join(base, "artifacts");
    const [bash, python] = await twoChildren("artifact", dir);
    expect(new Set([...bash, ...python]).size).toBe(2 * PER_CHILD);
    expect(overlap(bash.map(Number), python.map(Number))).toBe(true);
    const store = createArtifactStore({ dir });
    const entries = await store.listArtifacts();
    expect(entries).toHaveLength(2 * PER_CHILD);
    expect(entries.every((entry) => entry.complete)).toBe(true);
    // Each file holds exactly what the process that got its id wrote into it.
    for (const [name, ids] of [
      ["bash", bash],
      ["python", python],
    ] as const) {
      for (const [i, id] of ids.entries()) {
        const text = await readFile(join(dir, `${id}.${name}.log`), "utf8");
        expect(text).toMatch(new RegExp(`^${name}:\\d+:${i}\\n$`));
      }
    }
  });

  it("allocate 2,000 distinct agent output indexes and overwrite nothing", async () => {
    const dir = join(base, "agents");
    const [bash, python] = await twoChildren("agent", dir);
    const indexes = [...bash, ...python].map((id) => Number(id.split("-")[0]));
    expect(new Set(indexes).size).toBe(2 * PER_CHILD);
    expect(overlap(indexes.slice(0, PER_CHILD), indexes.slice(PER_CHILD))).toBe(true);
    const store = createArtifactStore({ dir });
    expect(await store.listAgentOutputs()).toHaveLength(2 * PER_CHILD);
    for (const [i, id] of bash.entries()) {
      expect((await store.readAgentOutput(id)).text).toMatch(new RegExp(`^bash:\\d+:${i}\\n$`));
    }
  });
});

describe("a tool killed mid-write", () => {
  it("leaves an artifact that reads say is incomplete, and its id is never reused", async () => {
    const dir = join(base, "crash");
    const child = spawnChild(slowTool, [dir]);
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const artifactId = await new Promise<string>((resolve, reject) => {
      child.stdout!.on("data", (chunk: Buffer) => {
        const line = chunk.toString().trim();
        if (line.startsWith("{")) resolve((JSON.parse(line) as { artifactId: string }).artifactId);
      });
      child.on("exit", (code) => reject(new Error(`child exited early with ${code}: ${stderr}`)));
    });
    child.kill("SIGKILL");
    await new Promise((resolve) => child.on("close", resolve));

    const store = createArtifactStore({ dir });
    const router = createInternalUrlRouter({ artifacts: store });
    await expectStowageError(router.read(`artifact://${artifactId}`), "UNAVAILABLE", "ARTIFACT_INCOMPLETE");
    const soFar = await router.read(`artifact://${artifactId}`, { allowIncomplete: true, limit: 2 });
    expect(soFar.complete).toBe(false);
    expect(soFar.text).toBe("line 0 of a tool that never finishes\nline 1 of a tool that never finishes\n");
    expect(await store.listArtifacts()).toEqual([
      { id: artifactId, toolType: "bash", complete: false, fileName: `${artifactId}.bash.log.partial` },
    ]);
    expect(Number(await store.saveArtifact("bash", "after the crash"))).toBeGreaterThan(Number(artifactId));
  });
});
