import { describeValue } from "./describe-value.js";
import { StowageError } from "./errors.js";

/** Longest content type accepted. */
const MAX_CONTENT_TYPE_LENGTH = 255;

/** A parsed MIME type: the lowercase `type/subtype` and its parameters (names lowercased). */
export interface ContentType {
  /** `image/png`, lowercase. */
  essence: string;
  parameters: Readonly<Record<string, string>>;
}

// RFC 6838 restricted names for type and subtype; RFC 9110 tokens and quoted strings for parameters.
const ESSENCE = /^([A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126})\/([A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126})$/;
const PARAMETER =
  /^([A-Za-z0-9!#$&^_.+-]+)=(?:([A-Za-z0-9!#$%&'*+.^_`|~-]+)|"([^"\\\u0000-\u001f\u007f]*)")$/;

/** The parsed content type, or undefined when `value` is not one (`"image/png"`, `"text/plain; charset=utf-8"`). */
export function parseContentType(value: unknown): ContentType | undefined {
  if (typeof value !== "string" || value.length === 0 || value.length > MAX_CONTENT_TYPE_LENGTH)
    return undefined;
  const [essence = "", ...rest] = value.split(";");
  const match = ESSENCE.exec(essence.trim());
  if (!match) return undefined;
  const parameters: Record<string, string> = {};
  for (const part of rest) {
    const parameter = PARAMETER.exec(part.trim());
    if (!parameter) return undefined;
    const name = parameter[1]!.toLowerCase();
    if (Object.hasOwn(parameters, name)) return undefined;
    const raw = parameter[2] ?? parameter[3]!;
    // Only the charset value is case-insensitive; others keep their case.
    parameters[name] = name === "charset" ? raw.toLowerCase() : raw;
  }
  return { essence: `${match[1]}/${match[2]}`.toLowerCase(), parameters };
}

/** Throws INVALID_INPUT unless `value` is a MIME type such as `image/png`; returns it parsed. */
export function assertContentType(value: unknown, what = "contentType"): ContentType {
  const parsed = parseContentType(value);
  if (!parsed) {
    throw new StowageError(
      "INVALID_INPUT",
      `${what} must be a MIME type such as "image/png" or "text/plain; charset=utf-8", got ${describeValue(value)}`,
      typeof value === "string" && value.length > MAX_CONTENT_TYPE_LENGTH
        ? { details: { limit: MAX_CONTENT_TYPE_LENGTH } }
        : {},
    );
  }
  return parsed;
}
