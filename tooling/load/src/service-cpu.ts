import { readdir, readFile } from "node:fs/promises";

/**
 * The services a run leans on, by process name in /proc (Linux): Ceph RGW (its gateway and the
 * object store under it) and PostgreSQL (every backend: the replicas' pools stay open through a
 * run). Other work on the machine using the same services is counted too: the figure is an upper
 * bound on the run's share.
 */
const SERVICES: Record<string, RegExp> = {
  rgw: /^(radosgw|ceph-osd|ceph-mon|ceph-mgr)$/,
  postgres: /^postgres$/,
};

/** CPU seconds (user + system) each service's live processes have used so far; `{}` off Linux. */
export async function serviceCpuSeconds(): Promise<Record<string, number>> {
  const totals: Record<string, number> = {};
  const pids = await readdir("/proc").catch(() => [] as string[]);
  for (const pid of pids) {
    if (!/^\d+$/.test(pid)) continue;
    const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
    const open = stat.indexOf("(");
    const close = stat.lastIndexOf(")");
    if (open < 0 || close < 0) continue;
    const name = stat.slice(open + 1, close);
    const service = Object.keys(SERVICES).find((key) => SERVICES[key]!.test(name));
    if (!service) continue;
    const fields = stat.slice(close + 2).split(" ");
    // utime, stime, and cutime, cstime: PostgreSQL's backends are children of its postmaster, and a
    // backend that exits during the run (a pool's idle connection) leaves its time there.
    const ticks = [11, 12, 13, 14].reduce((sum, field) => sum + Number(fields[field] ?? 0), 0);
    totals[service] = (totals[service] ?? 0) + ticks / 100;
  }
  return totals;
}

/** What each service used between two readings; a process that ended between them is not counted. */
export function cpuBetween(
  before: Record<string, number>,
  after: Record<string, number>,
): Record<string, number> {
  return Object.fromEntries(
    Object.keys(SERVICES).map((service) => [
      service,
      Math.max(0, (after[service] ?? 0) - (before[service] ?? 0)),
    ]),
  );
}
