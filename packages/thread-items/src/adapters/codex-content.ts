import { imagePlaceholder, parseDataUrl } from "./media-placeholder.js";
import { object } from "./record-fields.js";

/** A Codex image (`input_image.image_url`, an entry of `user_message.images`) as a placeholder. */
export function codexImage(url: unknown): string {
  const data = parseDataUrl(url);
  return data ? imagePlaceholder(data.mediaType, data.base64) : imagePlaceholder(undefined, undefined);
}

/**
 * The text of Codex content items (`input_text`, `output_text`, `input_image`, reasoning
 * `summary_text`…): texts joined by newlines, images as placeholders.
 */
export function partsText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const parts: string[] = [];
  for (const part of content) {
    const fields = object(part);
    if (!fields) continue;
    if (typeof fields.text === "string") parts.push(fields.text);
    else if (fields.type === "input_image") parts.push(codexImage(fields.image_url));
  }
  return parts.join("\n");
}

/** Only the text items of Codex content, joined by newlines: what a user typed, without images. */
export function typedText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const parts: string[] = [];
  for (const part of content) {
    const text = object(part)?.text;
    if (typeof text === "string") parts.push(text);
  }
  return parts.join("\n");
}
