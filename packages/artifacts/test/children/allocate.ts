// Allocates `count` ids in a shared artifacts directory and writes, into each file, who wrote
// it; prints the ids as JSON. Waits for `goFile` first, so that two of these start together.
import { access } from "node:fs/promises";
import { createArtifactStore } from "@stowage/artifacts";

const [kind, dir, count, name, goFile] = process.argv.slice(2) as [string, string, string, string, string];
console.log("ready");
for (;;) {
  if (
    await access(goFile).then(
      () => true,
      () => false,
    )
  )
    break;
  await new Promise((resolve) => setTimeout(resolve, 2));
}
const store = createArtifactStore({ dir });
const ids: string[] = [];
for (let i = 0; i < Number(count); i++) {
  const stamp = `${name}:${process.pid}:${i}\n`;
  if (kind === "artifact") {
    ids.push(await store.saveArtifact(name, stamp));
  } else {
    const { outputId } = await store.allocateAgentOutput(name);
    await store.writeAgentOutput(outputId, stamp);
    ids.push(outputId);
  }
}
console.log(JSON.stringify(ids));
