/**
 * How a payload's base64 text is written, beyond its bytes: the alphabet, the padding, and the
 * line wrapping. With the bytes and its form, the text is rebuilt exactly; a text whose form this
 * cannot say (a stray space, lines of uneven length) has none, and its payload stays where it is.
 *
 * As stored: `""` for canonical base64 (standard alphabet, padded, one line), else the words that
 * differ, in this order, separated by one space: `url` (the `-_` alphabet), `unpadded`,
 * `wrap:<n>` (lines of `n` characters), `crlf` (`\r\n` line ends, else `\n`), `final` (a line end
 * after the last line too).
 */
interface Base64Form {
  urlSafe: boolean;
  padded: boolean;
  /** Characters a line; 0 for one line. */
  lineLength: number;
  lineEnd: "\n" | "\r\n";
  finalLineEnd: boolean;
}

const CANONICAL: Base64Form = {
  urlSafe: false,
  padded: true,
  lineLength: 0,
  lineEnd: "\n",
  finalLineEnd: false,
};

function formText(form: Base64Form): string {
  const words: string[] = [];
  if (form.urlSafe) words.push("url");
  if (!form.padded) words.push("unpadded");
  if (form.lineLength > 0) {
    words.push(`wrap:${form.lineLength}`);
    if (form.lineEnd === "\r\n") words.push("crlf");
    if (form.finalLineEnd) words.push("final");
  }
  return words.join(" ");
}

const WRAP = /^wrap:([1-9][0-9]{0,8})$/;

/** The form a stored text names, or undefined when it names none this version writes. */
function parseForm(text: string): Base64Form | undefined {
  if (text === "") return CANONICAL;
  const form = { ...CANONICAL };
  const words = text.split(" ");
  let index = 0;
  const take = (word: string): boolean => {
    if (words[index] !== word) return false;
    index++;
    return true;
  };
  form.urlSafe = take("url");
  form.padded = !take("unpadded");
  const wrap = WRAP.exec(words[index] ?? "");
  if (wrap) {
    index++;
    form.lineLength = Number(wrap[1]);
    form.lineEnd = take("crlf") ? "\r\n" : "\n";
    form.finalLineEnd = take("final");
  }
  // Every word in its place, none twice, and the text as this version would write it.
  return index === words.length && formText(form) === text ? form : undefined;
}

/** True when `text` is a form {@link encodeInForm} takes. */
export const isBase64Form = (text: unknown): text is string =>
  typeof text === "string" && parseForm(text) !== undefined;

/** `bytes` as base64 in the form `form` names (see {@link isBase64Form}). */
export function encodeInForm(bytes: Uint8Array, form: string): string {
  const parsed = parseForm(form);
  if (!parsed) throw new Error(`not a base64 form: ${JSON.stringify(form)}`);
  let text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString(
    parsed.urlSafe ? "base64url" : "base64",
  );
  // Node's base64url is unpadded; standard base64 is padded.
  if (parsed.urlSafe && parsed.padded) text = text.padEnd(Math.ceil(text.length / 4) * 4, "=");
  if (!parsed.urlSafe && !parsed.padded) text = text.replace(/=+$/, "");
  if (parsed.lineLength === 0) return text;
  const lines: string[] = [];
  for (let start = 0; start < text.length; start += parsed.lineLength)
    lines.push(text.slice(start, start + parsed.lineLength));
  return lines.join(parsed.lineEnd) + (parsed.finalLineEnd ? parsed.lineEnd : "");
}

/**
 * The form in which `text` writes `bytes`, or undefined when no form rebuilds `text` exactly. The
 * candidate is read off the text (its alphabet, its padding, its first line) and then checked by
 * encoding the bytes in it: only an exact match counts.
 */
export function base64FormOf(text: string, bytes: Uint8Array): string | undefined {
  const newline = text.indexOf("\n");
  const lineEnd = newline > 0 && text[newline - 1] === "\r" ? "\r\n" : "\n";
  const form: Base64Form = {
    urlSafe: /[-_]/.test(text),
    // Bytes that fill every group of three need no padding: the text is the same either way.
    padded: text.includes("=") || bytes.byteLength % 3 === 0,
    lineLength: newline < 0 ? 0 : newline - (lineEnd.length - 1),
    lineEnd,
    finalLineEnd: newline >= 0 && text.endsWith(lineEnd),
  };
  if (newline >= 0 && form.lineLength === 0) return undefined;
  const name = formText(form);
  return encodeInForm(bytes, name) === text ? name : undefined;
}
