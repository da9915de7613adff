import { ListObjectsV2Command } from "@aws-sdk/client-s3";
import { keyProblem, type ListItem, type ListPage, StowageError } from "@stowage/core";
import type { S3Context } from "./s3-context.js";

/** One page of ListObjectsV2 from `StartAfter`, the store's prefix taken off each key. */
export async function listObjects(
  context: S3Context,
  listPrefix: string,
  cursor: string | undefined,
  limit: number,
  signal: AbortSignal | undefined,
): Promise<ListPage> {
  const { prefix } = context;
  const result = await context.client.send(
    new ListObjectsV2Command({
      Bucket: context.bucket,
      Prefix: prefix + listPrefix,
      MaxKeys: limit,
      ...(cursor === undefined ? {} : { StartAfter: prefix + cursor }),
    }),
    { abortSignal: signal },
  );
  const items: ListItem[] = [];
  let last: string | undefined;
  for (const object of result.Contents ?? []) {
    if (!object.Key?.startsWith(prefix)) continue;
    last = object.Key.slice(prefix.length);
    // Keys written by other tools that this store could never read back are not listed.
    if (keyProblem(last) !== undefined) continue;
    items.push({ key: last, size: object.Size ?? 0, lastModified: object.LastModified ?? new Date(0) });
  }
  if (result.IsTruncated && last === undefined) {
    throw new StowageError("INTERNAL", `${context.name} list: the server said there is more but sent no key`);
  }
  return { items, cursor: result.IsTruncated ? last : undefined };
}
