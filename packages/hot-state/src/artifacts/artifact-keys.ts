import { describeValue, keyPrefixProblem, StowageError } from "@stowage/core";

/** Name of the object holding an artifact's bytes, inside its directory. */
export const CONTENT_OBJECT = "content";
/** Name of the object holding an artifact's record, inside its directory. */
export const RECORD_OBJECT = "record.json";

const ARTIFACT_KEY = /^([a-f0-9]{2})\/([a-f0-9]{64})\/(content|record\.json)$/;

/**
 * Keys of the registry layout `<prefix><first 2 hex>/<sha256>/{content,record.json}`, which the
 * file-system store lays out as directories `<root>/<aa>/<sha256>/`.
 */
export function createArtifactKeys(prefix: string) {
  if (
    typeof prefix !== "string" ||
    keyPrefixProblem(prefix) !== undefined ||
    (prefix !== "" && !prefix.endsWith("/"))
  ) {
    throw new StowageError(
      "INVALID_INPUT",
      `artifact registry prefix must be "" or a safe key prefix ending in "/" (e.g. "artifacts/"), got ${describeValue(prefix)}`,
    );
  }
  const directory = (id: string) => `${prefix}${id.slice(0, 2)}/${id}/`;
  return {
    prefix,
    contentKey: (id: string) => directory(id) + CONTENT_OBJECT,
    recordKey: (id: string) => directory(id) + RECORD_OBJECT,
    /** The artifact and object a key holds, or `null` for a key outside the layout. */
    parse(key: string): { id: string; object: "content" | "record.json" } | null {
      if (!key.startsWith(prefix)) return null;
      const match = ARTIFACT_KEY.exec(key.slice(prefix.length));
      if (!match || !match[2]!.startsWith(match[1]!)) return null;
      return { id: match[2]!, object: match[3] as "content" | "record.json" };
    },
  };
}

export type ArtifactKeys = ReturnType<typeof createArtifactKeys>;
