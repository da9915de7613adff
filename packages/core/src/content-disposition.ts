/**
 * A `Content-Disposition` value: `attachment; filename="…"; filename*=UTF-8''…`, with an ASCII
 * fallback name for old clients beside the exact UTF-8 one (RFC 6266).
 */
export function contentDisposition(disposition: "inline" | "attachment", filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, "_");
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `${disposition}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
