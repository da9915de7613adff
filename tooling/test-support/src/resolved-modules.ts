import { register } from "node:module";
import { MessageChannel } from "node:worker_threads";
import { sourceUrl } from "./compiled-sources.js";

/**
 * Starts recording every module URL this process resolves from now on (through a resolve hook,
 * so it sees what Node really loads, dynamic imports included). Call the returned function to get
 * the sorted URLs and stop; a compiled copy's modules (compiled-sources.ts) are named by their
 * sources. For child processes of tests that prove what an import graph holds (e.g. that an
 * fs-only app never loads `@aws-sdk/*`).
 */
export function recordResolvedModules(): () => Promise<string[]> {
  const resolved = new Set<string>();
  const { port1, port2 } = new MessageChannel();
  port1.on("message", (url: string) => resolved.add(sourceUrl(url)));
  register("./record-resolutions.mjs", {
    parentURL: import.meta.url,
    data: { port: port2 },
    transferList: [port2],
  });
  return async () => {
    // Messages from the hooks thread arrive asynchronously; let them land before reporting.
    await new Promise((resolve) => setTimeout(resolve, 200));
    port1.close();
    return [...resolved].sort();
  };
}

/** The installed packages among module `urls` (`@aws-sdk/client-s3`, `pg`…), outermost name first. */
export function installedPackages(urls: readonly string[]): string[] {
  const packages = new Set<string>();
  for (const url of urls) {
    const match = /\/node_modules\/(?!.*\/node_modules\/)((?:@[^/]+\/)?[^/]+)\//.exec(url);
    if (match) packages.add(match[1]!);
  }
  return [...packages].sort();
}
