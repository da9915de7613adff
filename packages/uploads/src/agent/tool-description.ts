import { formatSize } from "../format-size.js";
import { DEFAULT_UPLOAD_POLICY, type UploadPolicy } from "../upload-policy.js";

const MIB = 1024 * 1024;

/** The groups the description names, in its order, by the first MIME type of each extension. */
const GROUPS: readonly { label: string; holds: (type: string) => boolean }[] = [
  { label: "images", holds: (type) => type.startsWith("image/") },
  { label: "videos", holds: (type) => type.startsWith("video/") },
  {
    label: "text files",
    holds: (type) => type.startsWith("text/") || type === "application/json" || type === "application/xml",
  },
  { label: "other files", holds: () => true },
];

/** `a`, `a and b`, `a, b, and c`: the document's list style. */
function listOf(parts: readonly string[]): string {
  if (parts.length <= 2) return parts.join(" and ");
  return `${parts.slice(0, -1).join(", ")}, and ${parts.at(-1)}`;
}

/** `50MB` for whole mebibytes, as the document writes it (its MB are MiB); `1.5 MiB` otherwise. */
function sizeText(bytes: number): string {
  return bytes % MIB === 0 ? `${bytes / MIB}MB` : formatSize(bytes);
}

/**
 * The `UploadArtifact` tool's description, as the design document gives it, generated from
 * `policy` so that it states the formats and the size limit the server enforces.
 */
export function uploadArtifactToolDescription(policy: UploadPolicy = DEFAULT_UPLOAD_POLICY): string {
  const grouped = GROUPS.map(() => [] as string[]);
  for (const [extension, types] of Object.entries(policy.allowedTypes)) {
    grouped[GROUPS.findIndex((group) => group.holds(types[0] ?? ""))]!.push(extension);
  }
  const formats = GROUPS.flatMap((group, i) =>
    grouped[i]!.length === 0 ? [] : [`${group.label} (${grouped[i]!.join(", ")})`],
  );
  return (
    "Upload a file (screenshot, video, log) to the session artifacts for user review. " +
    `Supported formats: ${listOf(formats)}. ` +
    `Maximum file size: ${sizeText(policy.maxFileSizeBytes)}. ` +
    "If an artifact with the same filename already exists, it will be overwritten with the new file."
  );
}
