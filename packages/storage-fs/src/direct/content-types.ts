import { contentDisposition } from "@stowage/core";

/**
 * Types a downloaded object is served with, by extension. Anything else, HTML included, is served
 * as `application/octet-stream`, so a stored file can never run as a page of the serving origin,
 * whatever disposition its URL asks for.
 */
const INLINE_CONTENT_TYPES: Readonly<Record<string, string>> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  mp4: "video/mp4",
  mov: "video/quicktime",
  webm: "video/webm",
  avi: "video/x-msvideo",
  txt: "text/plain; charset=utf-8",
  log: "text/plain; charset=utf-8",
  md: "text/plain; charset=utf-8",
  csv: "text/plain; charset=utf-8",
  json: "application/json",
};

/** What a signed download URL may ask for; absent fields take the defaults below. */
export interface DownloadPresentation {
  disposition?: "inline" | "attachment";
  filename?: string;
}

/**
 * The `content-type` and `content-disposition` of a download of `key`. The type comes from the
 * key's extension; the disposition defaults to inline for the types above and attachment for
 * anything else; the file name defaults to the key's last segment.
 */
export function downloadHeaders(
  key: string,
  presentation: DownloadPresentation,
): { "content-type": string; "content-disposition": string } {
  const name = key.slice(key.lastIndexOf("/") + 1);
  const dot = name.lastIndexOf(".");
  const type = dot < 0 ? undefined : INLINE_CONTENT_TYPES[name.slice(dot + 1).toLowerCase()];
  const disposition = presentation.disposition ?? (type ? "inline" : "attachment");
  return {
    "content-type": type ?? "application/octet-stream",
    "content-disposition": contentDisposition(disposition, presentation.filename ?? name),
  };
}
