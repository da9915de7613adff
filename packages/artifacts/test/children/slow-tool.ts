// A tool streaming output through an OutputSink forever; prints the artifact id once the
// output spilled, so that the parent can kill it mid-write.
import { createArtifactStore, createOutputSink } from "@stowage/artifacts";

const [dir] = process.argv.slice(2) as [string];
const sink = createOutputSink({
  artifacts: createArtifactStore({ dir }),
  toolType: "bash",
  spillBytes: 1024,
});
let announced = false;
for (let i = 0; ; i++) {
  await sink.push(`line ${i} of a tool that never finishes\n`);
  if (!announced && sink.artifactId !== undefined && i > 200) {
    announced = true;
    console.log(JSON.stringify({ artifactId: sink.artifactId }));
  }
  if (i % 100 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
}
