import { fsyncDirectory } from "@stowage/core/fs";

interface DirectoryState {
  /** The fsync in progress; it may have started before a newcomer's rename, so cannot cover it. */
  running?: Promise<void>;
  /** The next fsync, not started yet: everyone who asks now joins it. */
  queued?: Promise<void>;
}

/**
 * Group commit for directory fsyncs. A caller is answered by an fsync that *started after it
 * asked* (so it covers the caller's rename); concurrent callers share that one fsync instead of
 * each paying for their own. Sequential callers see no difference.
 */
export function createDirectorySync(): (directory: string) => Promise<void> {
  const states = new Map<string, DirectoryState>();
  return (directory) => {
    let state = states.get(directory);
    if (!state) {
      state = {};
      states.set(directory, state);
    }
    if (state.queued) return state.queued;
    const current = state;
    const queued = (current.running ?? Promise.resolve())
      .catch(() => {})
      .then(async () => {
        current.queued = undefined;
        const running = fsyncDirectory(directory);
        current.running = running;
        try {
          await running;
        } finally {
          if (current.running === running) current.running = undefined;
          if (!current.running && !current.queued) states.delete(directory);
        }
      });
    current.queued = queued;
    return queued;
  };
}
