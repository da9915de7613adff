import type { UploadProgress } from "@stowage/uploads/agent";
import cliProgress from "cli-progress";
import type { CommandContext } from "./context.js";
import { drawsProgress } from "./progress.js";

/**
 * One bar per file on stderr, drawn by cli-progress where stderr is a terminal and `--json` was
 * not given; nothing otherwise (a log, a pipe or a script gets the result lines only). `stop()`
 * clears the bars up.
 */
export function uploadProgressBars(
  context: CommandContext,
  json: boolean | undefined,
): {
  onProgress: (progress: UploadProgress) => void;
  stop: () => void;
} {
  if (!drawsProgress(context, json)) return { onProgress: () => {}, stop: () => {} };
  const bars = new cliProgress.MultiBar(
    {
      stream: context.stderr as NodeJS.WriteStream,
      format: "[{bar}] {percentage}% {sent}/{total} MiB {filename}",
      hideCursor: true,
      clearOnComplete: false,
    },
    cliProgress.Presets.shades_classic,
  );
  const byFile = new Map<string, cliProgress.SingleBar>();
  const mib = (bytes: number) => (bytes / (1024 * 1024)).toFixed(1);
  return {
    onProgress({ filename, sentBytes, totalBytes }) {
      let bar = byFile.get(filename);
      if (!bar) {
        bar = bars.create(totalBytes, 0, { filename, sent: mib(0), total: mib(totalBytes) });
        byFile.set(filename, bar);
      }
      // Each retry starts again from 0: the bar follows it back.
      bar.setTotal(totalBytes);
      bar.update(sentBytes, { filename, sent: mib(sentBytes), total: mib(totalBytes) });
    },
    stop: () => bars.stop(),
  };
}
