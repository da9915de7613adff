import { StowageError } from "@stowage/core";

function strip(value: unknown, root: string): unknown {
  if (typeof value === "string") return value.split(`${root}/`).join("").split(root).join("<root>");
  if (Array.isArray(value)) return value.map((item) => strip(item, root));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, strip(item, root)]));
  }
  return value;
}

/**
 * `err` as a client of a signed URL may see it: the store's root directory taken out of its
 * message and details, so that a file-system error (which names the file it failed on) says
 * `sessions/user/alice/s1/artifacts` — a key the client knows — instead of the server's absolute
 * path. Anything that is not a StowageError goes on unchanged (it is answered as a bare INTERNAL).
 */
export function withoutRoot(err: unknown, root: string): unknown {
  if (!StowageError.is(err) || root.length <= 1) return err;
  const message = strip(err.message, root) as string;
  const details =
    err.details === undefined ? undefined : (strip(err.details, root) as Record<string, unknown>);
  if (message === err.message && JSON.stringify(details) === JSON.stringify(err.details)) return err;
  return new StowageError(err.code, message, {
    ...(err.reason === undefined ? {} : { reason: err.reason }),
    ...(details === undefined ? {} : { details }),
  });
}
