/**
 * What a runnable example says it prints: the comment after each one-line `console.log(…);`
 * (`console.log(report.deleted); // 0`). In the comment, `…` stands for any text and `<name>`
 * for one run of non-space characters (a hash, a temp path), so a README can show what varies.
 */

/** One promised output, with the README line it was read from (1-based, within the example). */
export interface ExpectedOutput {
  line: number;
  text: string;
}

const PROMISE = /^\s*console\.log\(.*\);\s*\/\/\s*(.*\S)\s*$/;

/** The outputs an example's code promises, in order. */
export function expectedOutputs(code: string): ExpectedOutput[] {
  const outputs: ExpectedOutput[] = [];
  code.split("\n").forEach((text, index) => {
    const promised = PROMISE.exec(text)?.[1];
    if (promised !== undefined) outputs.push({ line: index + 1, text: promised });
  });
  return outputs;
}

/**
 * The promises that `output` does not keep, in order: each must appear after the previous one.
 * Whitespace runs count as one space on both sides (Node prints objects over several lines).
 */
export function unkeptOutputs(output: string, expected: readonly ExpectedOutput[]): ExpectedOutput[] {
  const printed = collapse(output);
  const unkept: ExpectedOutput[] = [];
  let from = 0;
  for (const promise of expected) {
    // Whole words only: "1 0" is not kept by "11 0".
    const pattern = new RegExp(`(?<=^|\\s)${patternOf(collapse(promise.text))}(?=\\s|$)`, "gs");
    pattern.lastIndex = from;
    const match = pattern.exec(printed);
    if (match === null) unkept.push(promise);
    else from = match.index + match[0].length;
  }
  return unkept;
}

function collapse(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function patternOf(promised: string): string {
  return promised
    .split(/(…|<[A-Za-z][\w-]*>)/)
    .map((part) => {
      if (part === "…") return ".*?";
      if (/^<[A-Za-z][\w-]*>$/.test(part)) return "\\S+";
      return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    })
    .join("");
}
