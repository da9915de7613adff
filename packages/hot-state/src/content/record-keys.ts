import { assertKeyDirectoryPrefix, type ObjectStore, type OperationOptions } from "@stowage/core";

const RECORD_KEY = /^([a-f0-9]{2})\/([a-f0-9]{64})\.json$/;
// The same record key under any namespace: `<anything>/<2 hex>/<sha256>.json`.
const NESTED_RECORD_KEY = /(?:^|\/)([a-f0-9]{2})\/([a-f0-9]{64})\.json$/;

function idOf(match: RegExpExecArray | null): string | null {
  return match && match[2]!.startsWith(match[1]!) ? match[2]! : null;
}

/** Keys of the registry's records, `<prefix><first 2 hex>/<sha256>.json`: a file-system directory stays small. */
export function createRecordKeys(prefix: string) {
  assertKeyDirectoryPrefix(prefix, "content registry prefix");
  return {
    prefix,
    recordKey: (id: string) => `${prefix}${id.slice(0, 2)}/${id}.json`,
    /** The content id a key holds the record of, or `null` for a key outside the layout. */
    idFromKey: (key: string) =>
      key.startsWith(prefix) ? idOf(RECORD_KEY.exec(key.slice(prefix.length))) : null,
  };
}

/** Options of {@link iterateContentRefIds}: the registries' records store, and a prefix above theirs. */
export interface IterateContentRefIdsOptions extends OperationOptions {
  records: ObjectStore;
  prefix?: string;
}

/**
 * The content ids recorded by every content registry below `prefix` (one per tenant, say): the
 * blobs a garbage collection must keep for them, found without knowing the registries' prefixes.
 */
export async function* iterateContentRefIds(options: IterateContentRefIdsOptions): AsyncGenerator<string> {
  const { records, prefix = "", signal } = options;
  for await (const item of records.iterate({ prefix, signal })) {
    const id = idOf(NESTED_RECORD_KEY.exec(item.key));
    if (id !== null) yield id;
  }
}
