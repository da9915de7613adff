import { type ArtifactRecord, ArtifactRecordSchema } from "../schemas/artifact-record-schema.js";
import { decodeUtf8 } from "./sniff-content.js";

/** Largest `record.json` read; a larger one is treated as damaged, not parsed. */
export const MAX_RECORD_BYTES = 64 * 1024;

/**
 * What a stored record is worth next to its content. `ok`: valid and about this content.
 * `stale`: valid and about this content, but its `content_uri` is not where the content now is
 * (the store moved); `record` carries the corrected URI. `missing` / `damaged`: rebuild it.
 */
export type RecordState =
  | { status: "ok"; record: ArtifactRecord }
  | { status: "stale"; record: ArtifactRecord }
  | { status: "missing" }
  | { status: "damaged"; problem: string };

export function readRecordState(
  bytes: Uint8Array | null,
  expected: { id: string; size: number; contentUri: string },
): RecordState {
  if (bytes === null) return { status: "missing" };
  if (bytes.byteLength > MAX_RECORD_BYTES) {
    return { status: "damaged", problem: `record is ${bytes.byteLength} bytes, over ${MAX_RECORD_BYTES}` };
  }
  const text = decodeUtf8(bytes);
  if (text === null) return { status: "damaged", problem: "record is not UTF-8" };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { status: "damaged", problem: "record is not JSON" };
  }
  const parsed = ArtifactRecordSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { status: "damaged", problem: `record ${issue.path.join(".") || "(root)"} ${issue.message}` };
  }
  const record = parsed.data;
  if (record.artifact_id !== expected.id) {
    return { status: "damaged", problem: `record names artifact ${record.artifact_id}` };
  }
  if (record.size_bytes !== expected.size) {
    return {
      status: "damaged",
      problem: `record says ${record.size_bytes} bytes, content has ${expected.size}`,
    };
  }
  if (record.content_uri !== expected.contentUri) {
    return { status: "stale", record: { ...record, content_uri: expected.contentUri } };
  }
  return { status: "ok", record };
}
