import { readFileSync } from "node:fs";

/** This package's version, sent as `serverInfo.version` (`src/server/` and `dist/server/` are both two levels below package.json). */
export const PACKAGE_VERSION = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;
