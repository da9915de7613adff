import { describeValue, pathSegmentProblem, StowageError } from "@stowage/core";

/** Longest upload filename accepted, in UTF-8 bytes; a policy may set a smaller cap. */
export const MAX_UPLOAD_FILENAME_BYTES = 255;

// Percent-encoded bytes: a later decode (a URL route, a browser download) could turn "%2e%2e%2f"
// into "../".
const PERCENT_ENCODED = /%[0-9A-Fa-f]{2}/;
// Characters Windows forbids in file names; a user downloading the upload would hit them.
const WINDOWS_RESERVED_CHARACTERS = /[<>:"|?*]/;
// Characters that hide or reorder what a reviewer sees ("report\u202Egnp.exe" shows as
// "reportexe.png"), by Unicode category rather than a hand-picked list: controls (Cc), format
// characters (Cf: zero-width, text-direction, tag characters, the byte order mark, the
// Arabic letter mark…), private use (Co), line and paragraph separators; then the blank fillers
// and invisible joiners that are letters or marks (a name of only U+3164 looks empty).
// Variation selectors stay: emoji in real names carry U+FE0F.
// (The fillers and joiners are an alternation: some are combining marks, which a character class
// would pair with the character before them.)
const INVISIBLE_CHARACTERS =
  /[\p{Cc}\p{Cf}\p{Co}\p{Zl}\p{Zp}]|\u034f|\u115f|\u1160|\u17b4|\u17b5|\u180b|\u180c|\u180d|\u180f|\u2800|\u3164|\uffa0/u;
// Slashes and backslashes from other blocks: no file system splits on them, but a name such as
// "..\u2215..\u2215etc" reads as a path to whoever reviews it.
const LOOKALIKE_SEPARATORS = /[\u2044\u2215\u29f8\u29f9\uff0f\uff3c]/;
const WINDOWS_DEVICE_NAME = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\.|$)/i;

/** Why `name` is not a safe upload filename (a plain basename), or undefined when it is. */
export function uploadFilenameProblem(
  name: unknown,
  maxBytes: number = MAX_UPLOAD_FILENAME_BYTES,
): string | undefined {
  if (typeof name !== "string") return "must be a string";
  const segment = pathSegmentProblem(name);
  if (segment) return segment;
  if (Buffer.byteLength(name, "utf8") > maxBytes) return `must be at most ${maxBytes} UTF-8 bytes`;
  if (PERCENT_ENCODED.test(name)) return "must not contain percent-encoded characters such as %2e or %2f";
  if (WINDOWS_RESERVED_CHARACTERS.test(name)) return 'must not contain any of < > : " | ? *';
  if (INVISIBLE_CHARACTERS.test(name)) return "must not contain invisible or text-direction characters";
  if (LOOKALIKE_SEPARATORS.test(name)) return "must not contain characters that look like / or \\";
  if (name.startsWith(".")) return "must not start with a dot";
  if (/^\s|\s$/.test(name)) return "must not start or end with whitespace";
  if (name.endsWith(".")) return "must not end with a dot";
  if (WINDOWS_DEVICE_NAME.test(name)) return "must not be a reserved device name such as CON or NUL";
  return undefined;
}

/** Throws INVALID_INPUT (reason `INVALID_FILENAME`) unless `name` is a safe upload filename. */
export function assertUploadFilename(
  name: unknown,
  maxBytes: number = MAX_UPLOAD_FILENAME_BYTES,
): asserts name is string {
  const problem = uploadFilenameProblem(name, maxBytes);
  if (problem) {
    throw new StowageError("INVALID_INPUT", `filename ${problem}, got ${describeValue(name)}`, {
      reason: "INVALID_FILENAME",
    });
  }
}

/** The extension after the last dot, lowercased; `""` when there is none. */
export function filenameExtension(name: string): string {
  const dot = name.lastIndexOf(".");
  return dot <= 0 ? "" : name.slice(dot + 1).toLowerCase();
}
