// A tool streaming output through an OutputSink forever; prints the artifact id once the
// artifact file holds its first two lines on disk, so that the parent can kill it mid-write.
// (The id exists as soon as the file is open, but the sink's writes land later: announcing the
// id alone let a loaded machine kill the tool before anything reached the file.)
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { createArtifactStore, createOutputSink } from "@stowage/artifacts";

const [dir] = process.argv.slice(2) as [string];
const sink = createOutputSink({
  artifacts: createArtifactStore({ dir }),
  toolType: "bash",
  spillBytes: 1024,
});
const line = (i: number) => `line ${i} of a tool that never finishes\n`;
const twoLinesBytes = Buffer.byteLength(line(0) + line(1));

async function bytesOnDisk(artifactId: string): Promise<number> {
  const info = await stat(join(dir, `${artifactId}.bash.log.partial`)).catch(() => undefined);
  return info?.size ?? 0;
}

let announced = false;
for (let i = 0; ; i++) {
  await sink.push(line(i));
  const artifactId = sink.artifactId;
  if (!announced && artifactId !== undefined && (await bytesOnDisk(artifactId)) >= twoLinesBytes) {
    announced = true;
    console.log(JSON.stringify({ artifactId }));
  }
  if (i % 100 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
}
