/**
 * Types a downloaded object is served with, by extension. Anything else, HTML included, is served
 * as a download (`application/octet-stream`, attachment), so a stored file can never run as a page
 * of the serving origin.
 */
export const INLINE_CONTENT_TYPES: Readonly<Record<string, string>> = {
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

export function downloadContentType(key: string): { type: string; inline: boolean } {
  const dot = key.lastIndexOf(".");
  const extension = dot < 0 || dot < key.lastIndexOf("/") ? "" : key.slice(dot + 1).toLowerCase();
  const type = INLINE_CONTENT_TYPES[extension];
  return type ? { type, inline: true } : { type: "application/octet-stream", inline: false };
}
