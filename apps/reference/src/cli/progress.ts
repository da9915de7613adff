import cliProgress from "cli-progress";
import type { CommandContext } from "./context.js";

/**
 * How far a long command has gone, drawn as one line on stderr by cli-progress. `update(done)`
 * before `total` is known shows a count (`scanned 1200 blobs`); once `total(n)` is given, a bar.
 */
export interface CountProgress {
  /** How many there are, once known. */
  total(count: number): void;
  /** How many are done so far, and the step they are in (`scan`, `delete`). */
  update(done: number, step?: string): void;
  /** Draws the last state and ends the line. */
  stop(): void;
}

const quiet: CountProgress = { total: () => {}, update: () => {}, stop: () => {} };

/** Whether progress may be drawn: on a terminal, never with `--json` (a script reads stdout, maybe stderr). */
export function drawsProgress(context: CommandContext, json: boolean | undefined): boolean {
  return json !== true && context.stderr.isTTY === true;
}

/**
 * One progress line for `label` (`verifying blobs`) on stderr where it is a terminal and `--json`
 * was not given; nothing otherwise, so a log, a pipe or a script gets the result lines alone.
 */
export function countProgress(
  context: CommandContext,
  options: { json: boolean | undefined; label: string; unit: string },
): CountProgress {
  if (!drawsProgress(context, options.json)) return quiet;
  let known = false;
  const bar = new cliProgress.SingleBar(
    {
      stream: context.stderr as NodeJS.WriteStream,
      hideCursor: true,
      clearOnComplete: false,
      format: (format, params, payload: { step?: string }) => {
        const step = payload.step ? ` (${payload.step})` : "";
        if (!known) return `${options.label}: ${params.value} ${options.unit}${step}`;
        const width = format.barsize ?? 30;
        const filled = Math.round(params.progress * width);
        const drawn = `${"█".repeat(filled)}${"░".repeat(width - filled)}`;
        return `${options.label} [${drawn}] ${params.value}/${params.total} ${options.unit}${step}`;
      },
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(0, 0, {});
  return {
    total(count) {
      known = true;
      bar.setTotal(count);
    },
    update(done, step) {
      bar.update(done, step === undefined ? {} : { step });
    },
    stop: () => bar.stop(),
  };
}

/**
 * Runs `work` under a line that says what it is doing and for how long (`capturing session s1… 3s`),
 * for one long call whose inside reports nothing (a capture, a restore); on a terminal without
 * `--json` only, and cleared once the work is done, so that only its result stays.
 */
export async function withElapsedLine<T>(
  context: CommandContext,
  options: { json: boolean | undefined; label: string },
  work: () => Promise<T>,
): Promise<T> {
  if (!drawsProgress(context, options.json)) return work();
  const line = new cliProgress.SingleBar({
    stream: context.stderr as NodeJS.WriteStream,
    hideCursor: true,
    clearOnComplete: true,
    format: `${options.label}… {duration_formatted}`,
  });
  line.start(1, 0);
  try {
    return await work();
  } finally {
    line.stop();
  }
}
