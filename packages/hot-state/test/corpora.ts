import { createHash } from "node:crypto";

/** Deterministic SHA-256 hex ids, as content ids look. */
export const hexIds = (count: number, seed = "id") =>
  Array.from({ length: count }, (_, i) => createHash("sha256").update(`${seed}-${i}`).digest("hex"));

const ids = hexIds(60);

/** Texts whose token counts `chars / 4` gets badly wrong, and ordinary ones it gets about right. */
export const CORPORA = {
  hexIds: ids.join("\n"),
  json: JSON.stringify({
    session_id: "sess-1",
    artifact_index: ids.slice(0, 20).map((id, i) => ({
      artifact_id: id,
      type: "code",
      label: `src/file-${i}.ts`,
      version: `v${i}`,
      summary: "Parser for the config format used by the loader",
    })),
  }),
  cjk: "本系统通过在外部存储大型内容并通过紧凑的标识符引用它来减少令牌使用量。这是一个测试句子，用于检查分词器的行为。日本語のテキストも含めます。".repeat(
    20,
  ),
  prose:
    "The artifact references system reduces token usage by storing large content outside the prompt " +
    "and referring to it by compact ids. Instead of sending whole files, code or documents with every " +
    "request, the dispatcher keeps a small hot state with an index of what can be fetched on demand. ".repeat(
      20,
    ),
  code: `export function mapConcurrent<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>) {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!);
    }
  };
  return Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker)).then(() => results);
}
`.repeat(10),
} as const;

/** A mixed text of exactly `chars` characters, for throughput benchmarks. */
export function mixedText(chars: number): string {
  const parts = Object.values(CORPORA);
  let text = "";
  for (let i = 0; text.length < chars; i++) text += `${parts[i % parts.length]}\n`;
  return text.slice(0, chars);
}
