import { type ContentRecord, ContentRecordSchema } from "../schemas/content-record-schema.js";
import { decodeUtf8 } from "./sniff-content.js";

/** Largest record read; a larger one is treated as damaged, not parsed. */
export const MAX_RECORD_BYTES = 64 * 1024;

/**
 * What a stored record is worth next to its content. `ok`: valid and about this content.
 * `stale`: valid and about this content, but its `content_uri` is not where the content now is
 * (the content store moved); `record` carries the corrected URI. `damaged`: rebuild it.
 */
type RecordState =
  | { status: "ok"; record: ContentRecord }
  | { status: "stale"; record: ContentRecord }
  | { status: "damaged"; problem: string };

export function readRecordState(
  bytes: Uint8Array,
  expected: { id: string; size: number; contentUri: string },
): RecordState {
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
  const parsed = ContentRecordSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { status: "damaged", problem: `record ${issue.path.join(".") || "(root)"} ${issue.message}` };
  }
  const record = parsed.data;
  if (record.artifact_id !== expected.id) {
    return { status: "damaged", problem: `record names content ${record.artifact_id}` };
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
