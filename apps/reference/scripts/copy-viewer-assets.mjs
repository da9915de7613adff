// Static files are read from beside their compiled modules: the viewer's (dist/viewer/assets/)
// and the demo's screenshot (dist/demo/assets/). tsc compiles TypeScript only, so the build copies them.
import { cpSync, rmSync } from "node:fs";

for (const folder of ["viewer/assets/", "demo/assets/"]) {
  const from = new URL(`../src/${folder}`, import.meta.url);
  const to = new URL(`../dist/${folder}`, import.meta.url);
  rmSync(to, { recursive: true, force: true });
  cpSync(from, to, { recursive: true });
}
