import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** One line of the summary: where CPU time went, by function (self time) and by package. */
export interface HotSpot {
  where: string;
  selfMs: number;
  share: number;
}

/**
 * The functions that took the most CPU time (self time, summed over every `.cpuprofile` V8 wrote
 * in `dir`), and the same by package (`node_modules/<name>`, `packages/<name>`, node's own).
 */
export async function summarizeProfiles(
  dir: string,
  top = 15,
): Promise<{ functions: HotSpot[]; packages: HotSpot[]; totalMs: number }> {
  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  let totalMs = 0;
  for (const file of (await readdir(dir)).filter((name) => name.endsWith(".cpuprofile"))) {
    const profile = JSON.parse(await readFile(join(dir, file), "utf8")) as CpuProfile;
    const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
    profile.samples.forEach((id, index) => {
      const node = nodes.get(id);
      if (!node) return;
      const ms = (profile.timeDeltas[index] ?? 0) / 1000;
      totalMs += ms;
      const { functionName, url, lineNumber } = node.callFrame;
      const where = `${functionName || "(anonymous)"} ${shortUrl(url)}:${lineNumber + 1}`;
      byFunction.set(where, (byFunction.get(where) ?? 0) + ms);
      const pkg = packageOf(url, functionName);
      byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + ms);
    });
  }
  const rank = (map: Map<string, number>) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([where, selfMs]) => ({ where, selfMs, share: totalMs > 0 ? selfMs / totalMs : 0 }));
  return { functions: rank(byFunction), packages: rank(byPackage), totalMs };
}

function shortUrl(url: string): string {
  const modules = url.lastIndexOf("node_modules/");
  if (modules >= 0) return url.slice(modules + "node_modules/".length);
  const repo = url.indexOf("/packages/");
  if (repo >= 0) return url.slice(repo + 1);
  const app = url.indexOf("/apps/");
  return app >= 0 ? url.slice(app + 1) : url;
}

function packageOf(url: string, functionName: string): string {
  if (url === "") return functionName.startsWith("(") ? functionName : "(native)";
  const modules = url.lastIndexOf("node_modules/");
  if (modules >= 0) {
    const parts = url.slice(modules + "node_modules/".length).split("/");
    return parts[0]!.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  const repo = /\/(packages|apps)\/([^/]+)\//.exec(url);
  if (repo) return `${repo[1]}/${repo[2]}`;
  if (url.startsWith("node:")) return "node (core)";
  return url;
}
