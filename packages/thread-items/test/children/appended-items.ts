import { toolResultItem } from "../../src/index.js";

/**
 * The `index`-th item a writer called `writer` appends: sizes from 40 bytes to 1.2 MB (well past a
 * pipe buffer and a page), so that interleaved partial writes would show.
 */
export function appendedItem(writer: string, index: number) {
  const size = index % 10 === 0 ? 1_200_000 : 40 + ((index * 7919) % 60_000);
  return toolResultItem({
    id: `${writer}-${index}`,
    invocationId: `tu_${writer}_${index}`,
    output: `${writer}${index}:`.padEnd(size, writer === "a" ? "α" : "b"),
  });
}
